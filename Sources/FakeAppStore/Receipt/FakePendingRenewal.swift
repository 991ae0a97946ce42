/// One element of verifyReceipt's `pending_renewal_info` (auto-renewable subscriptions).
struct FakePendingRenewal: Encodable, Sendable {
  var autoRenewProductId: String
  var productId: String
  var originalTransactionId: String
  var autoRenewStatus: String
  var expirationIntent: String?
  var isInBillingRetryPeriod: String?
  var gracePeriodExpiresDate: String?
  var gracePeriodExpiresDateMs: String?
  var gracePeriodExpiresDatePst: String?

  init(_ subscription: FakeSubscription) {
    autoRenewProductId = subscription.productId
    productId = subscription.productId
    originalTransactionId = subscription.originalTransactionId
    autoRenewStatus = String(subscription.autoRenewStatus)
    expirationIntent = subscription.expirationIntent.map { String($0) }
    isInBillingRetryPeriod = subscription.isInBillingRetryPeriod ? "1" : "0"
    let grace = subscription.gracePeriodExpiresDate.map(FakeAppleDate.init(milliseconds:))
    gracePeriodExpiresDate = grace?.gmt
    gracePeriodExpiresDateMs = grace?.milliseconds
    gracePeriodExpiresDatePst = grace?.pacific
  }
}
