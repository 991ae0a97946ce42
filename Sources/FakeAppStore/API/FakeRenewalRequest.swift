/// `POST /fake/v1/renewals`.
struct FakeRenewalRequest: Decodable, Sendable {
  /// Any transaction of the subscription.
  var transactionId: String
  /// The new period's expiry relative to now; default 30 days.
  var expiresInSeconds: Int64?
  /// "DID_RENEW" (default), "SUBSCRIBED" or "OFFER_REDEEMED".
  var notificationType: String?
  /// Default: none for DID_RENEW and OFFER_REDEEMED, "RESUBSCRIBE" for SUBSCRIBED.
  var subtype: String?
  var deliver: Bool?
  var notifyUrl: String?
}
