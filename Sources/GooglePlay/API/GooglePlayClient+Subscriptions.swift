extension GooglePlayClient {
  /// `purchases.subscriptionsv2.get`: a subscription purchase as Google holds it now.
  public func subscriptionPurchase(token: String, packageName: String? = nil)
    async throws(GooglePlayFailure) -> SubscriptionPurchaseV2
  {
    let body = try await send(
      "GET",
      [
        .literal("applications"), .parameter("packageName", packageName ?? self.packageName),
        .literal("purchases"), .literal("subscriptionsv2"), .literal("tokens"),
        .parameter("token", token),
      ])
    return try decode(SubscriptionPurchaseV2.self, body)
  }

  /// `purchases.subscriptions.acknowledge` (v1: v2 has no acknowledge): `subscriptionId` is
  /// the line item's `productId`.
  public func acknowledgeSubscription(
    subscriptionId: String, token: String, developerPayload: String? = nil,
    packageName: String? = nil
  ) async throws(GooglePlayFailure) {
    _ = try await send(
      "POST",
      [
        .literal("applications"), .parameter("packageName", packageName ?? self.packageName),
        .literal("purchases"), .literal("subscriptions"),
        .parameter("subscriptionId", subscriptionId), .literal("tokens"),
        .parameter("token", token, verb: "acknowledge"),
      ], json: developerPayload.map { ["developerPayload": $0] } ?? [:])
  }
}
