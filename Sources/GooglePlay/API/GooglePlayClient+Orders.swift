extension GooglePlayClient {
  /// `orders.get`: one order as Google's Orders API holds it, with the price paid.
  public func order(_ orderId: String, packageName: String? = nil)
    async throws(GooglePlayFailure) -> GoogleOrder
  {
    let body = try await send(
      "GET",
      [
        .literal("applications"), .parameter("packageName", packageName ?? self.packageName),
        .literal("orders"), .parameter("orderId", orderId),
      ])
    return try decode(GoogleOrder.self, body)
  }
}
