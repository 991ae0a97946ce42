/// `POST /fake/v1/notifications`: any notification type, known to Apple or not.
struct FakeNotificationRequest: Decodable, Sendable {
  var notificationType: String
  var subtype: String?
  /// The transaction it is about; for an auto-renewable subscription the notification carries
  /// the subscription's latest transaction (Apple's behaviour), except for CONSUMPTION_REQUEST.
  var transactionId: String?
  /// DID_FAIL_TO_RENEW / GRACE_PERIOD: when the grace period ends; default 16 days.
  var gracePeriodExpiresInSeconds: Int64?
  /// Without a transaction (TEST): which app and environment; environment default
  /// "Production".
  var bundleId: String?
  var environment: String?
  var deliver: Bool?
  var notifyUrl: String?
}
