extension GooglePlayClient {
  /// One page of `purchases.voidedpurchases.list`: purchases voided between `startTimeMillis`
  /// and `endTimeMillis` (Google: at most 30 days back; both ignored once `pageToken` is set),
  /// subscriptions included unless asked otherwise, quantity-based partial refunds always.
  public func voidedPurchases(
    startTimeMillis: Int64? = nil, endTimeMillis: Int64? = nil,
    type: VoidedPurchaseListType = .includingSubscriptions, maxResults: Int? = nil,
    pageToken: String? = nil, packageName: String? = nil
  ) async throws(GooglePlayFailure) -> VoidedPurchasesPage {
    // Without the flag Google leaves quantity-based partial refunds out of the list, and
    // their units would never be taken back.
    var query = [("type", String(type.rawValue)), ("includeQuantityBasedPartialRefund", "true")]
    if let startTimeMillis { query.append(("startTime", String(startTimeMillis))) }
    if let endTimeMillis { query.append(("endTime", String(endTimeMillis))) }
    if let maxResults { query.append(("maxResults", String(maxResults))) }
    if let pageToken { query.append(("token", pageToken)) }
    let body = try await send(
      "GET",
      [
        .literal("applications"), .parameter("packageName", packageName ?? self.packageName),
        .literal("purchases"), .literal("voidedpurchases"),
      ], query: query)
    return try decode(VoidedPurchasesPage.self, body)
  }

  /// Every page from `startTimeMillis` on, following `nextPageToken`; at most `maxPages`, so a
  /// peer that never ends its pages cannot keep a sweep going forever.
  public func allVoidedPurchases(
    startTimeMillis: Int64? = nil, type: VoidedPurchaseListType = .includingSubscriptions,
    maxPages: Int = 100, packageName: String? = nil
  ) async throws(GooglePlayFailure) -> [VoidedPurchase] {
    var all: [VoidedPurchase] = []
    var token: String?
    for _ in 0..<maxPages {
      let page = try await voidedPurchases(
        startTimeMillis: startTimeMillis, type: type, pageToken: token, packageName: packageName)
      all += page.purchases
      guard let next = page.nextPageToken, !next.isEmpty, next != token else { return all }
      token = next
    }
    return all
  }
}
