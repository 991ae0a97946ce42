/// The subscription as Apple now reports it, after `POST /fake/v1/subscriptions/state`.
struct FakeSubscriptionStateResponse: Encodable, Sendable {
  var originalTransactionId: String
  var latestTransactionId: String
  /// Apple's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
  var status: Int32
  var expiresDateMs: Int64?
  var gracePeriodExpiresDateMs: Int64?
}
