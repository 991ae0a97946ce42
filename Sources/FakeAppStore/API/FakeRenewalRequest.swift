/// `POST /fake/v1/renewals`.
struct FakeRenewalRequest: Decodable, Sendable {
  /// Any transaction of the subscription.
  var transactionId: String
  /// The new period's expiry relative to now; default 30 days.
  var expiresInSeconds: Int64?
  /// Another product of the subscription's group: an upgrade or crossgrade, which Apple starts
  /// at once (the period it replaces is marked `isUpgraded`). Default: the subscription's own.
  var productId: String?
  /// Milliunits, for a change of product; default the replaced period's price.
  var price: Int64?
  /// For a change of product, the token the app passed to StoreKit's purchase (a UUID);
  /// default the replaced period's.
  var appAccountToken: String?
  /// "DID_RENEW" (default), "SUBSCRIBED" or "OFFER_REDEEMED"; with another product,
  /// "DID_CHANGE_RENEWAL_PREF" (its default) or "SUBSCRIBED".
  var notificationType: String?
  /// Default: none for DID_RENEW and OFFER_REDEEMED, "RESUBSCRIBE" for SUBSCRIBED, "UPGRADE"
  /// for DID_CHANGE_RENEWAL_PREF.
  var subtype: String?
  var deliver: Bool?
  var notifyUrl: String?
}
