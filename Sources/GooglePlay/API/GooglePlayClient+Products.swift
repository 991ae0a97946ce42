extension GooglePlayClient {
  /// `purchases.products.get`: a one-time product purchase as Google holds it now.
  public func productPurchase(productId: String, token: String, packageName: String? = nil)
    async throws(GooglePlayFailure) -> ProductPurchase
  {
    let body = try await send("GET", productPath(packageName, productId, token, verb: nil))
    return try decode(ProductPurchase.self, body)
  }

  /// `purchases.productsv2.getproductpurchasev2`: the same purchase in Google's newer shape,
  /// read for when it became PURCHASED.
  public func productPurchaseV2(token: String, packageName: String? = nil)
    async throws(GooglePlayFailure) -> ProductPurchaseV2
  {
    let body = try await send(
      "GET",
      [
        .literal("applications"), .parameter("packageName", packageName ?? self.packageName),
        .literal("purchases"), .literal("productsv2"), .literal("tokens"),
        .parameter("token", token, verb: nil),
      ])
    return try decode(ProductPurchaseV2.self, body)
  }

  /// `purchases.products.acknowledge` (non-consumables): tells Google the purchase is granted,
  /// so it is not refunded after three days. Only once the credit is committed, and never
  /// while the purchase is pending.
  public func acknowledgeProduct(
    productId: String, token: String, developerPayload: String? = nil, packageName: String? = nil
  ) async throws(GooglePlayFailure) {
    _ = try await send(
      "POST", productPath(packageName, productId, token, verb: "acknowledge"),
      json: developerPayload.map { ["developerPayload": $0] } ?? [:])
  }

  /// `purchases.products.consume` (consumables): acknowledges and lets the user buy it again.
  public func consumeProduct(productId: String, token: String, packageName: String? = nil)
    async throws(GooglePlayFailure)
  {
    _ = try await send("POST", productPath(packageName, productId, token, verb: "consume"))
  }

  private func productPath(_ package: String?, _ productId: String, _ token: String, verb: String?)
    -> [PathSegment]
  {
    [
      .literal("applications"), .parameter("packageName", package ?? packageName),
      .literal("purchases"), .literal("products"), .parameter("productId", productId),
      .literal("tokens"), .parameter("token", token, verb: verb),
    ]
  }
}
