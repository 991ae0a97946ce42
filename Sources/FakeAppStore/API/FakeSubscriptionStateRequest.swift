/// `POST /fake/v1/subscriptions/state`: changes a subscription at Apple and sends nothing, as
/// when Apple's notification about it is lost. Every field but the transaction is optional.
struct FakeSubscriptionStateRequest: Decodable, Sendable {
  /// Any transaction of the subscription.
  var transactionId: String
  /// Moves the latest period's expiry to now plus this (negative: it ended in the past).
  var expiresInSeconds: Int64?
  /// Puts the subscription in billing retry (true) or out of it (false).
  var billingRetry: Bool?
  /// With billing retry: a grace period ending now plus this; negative or absent: none.
  var gracePeriodExpiresInSeconds: Int64?
  var autoRenew: Bool?
}
