import AppStore

/// The renewal state of one auto-renewable subscription (one original transaction id):
/// what Apple reports in `signedRenewalInfo` and `pending_renewal_info`.
struct FakeSubscription: Sendable {
  var originalTransactionId: String
  var productId: String
  var latestTransactionId: String
  /// 1 on, 0 off.
  var autoRenewStatus: Int32 = 1
  /// Why it expired (1 voluntary, 2 billing, 3 price increase, 4 not for sale); nil while live.
  var expirationIntent: Int32?
  var isInBillingRetryPeriod = false
  var gracePeriodExpiresDate: Int64?

  /// Apple's `status` in notifications: 1 active, 2 expired, 3 billing retry, 4 grace period,
  /// 5 revoked.
  func status(latest: FakeTransaction, now: Int64) -> Int32 {
    if latest.revocationDate != nil { return SubscriptionStatus.revoked.rawValue }
    if isInBillingRetryPeriod {
      if let grace = gracePeriodExpiresDate, grace > now {
        return SubscriptionStatus.billingGracePeriod.rawValue
      }
      return SubscriptionStatus.billingRetry.rawValue
    }
    if let expires = latest.expiresDate, expires > now { return SubscriptionStatus.active.rawValue }
    return SubscriptionStatus.expired.rawValue
  }

  func renewalInfo(latest: FakeTransaction, signedDate: Int64) -> JWSRenewalInfoDecodedPayload {
    JWSRenewalInfoDecodedPayload(
      originalTransactionId: originalTransactionId,
      autoRenewProductId: productId,
      productId: productId,
      autoRenewStatus: autoRenewStatus,
      renewalPrice: autoRenewStatus == 1 ? latest.price : nil,
      currency: autoRenewStatus == 1 ? latest.currency : nil,
      signedDate: signedDate,
      environment: latest.environment,
      recentSubscriptionStartDate: latest.originalPurchaseDate,
      renewalDate: autoRenewStatus == 1 ? latest.expiresDate : nil,
      expirationIntent: expirationIntent,
      gracePeriodExpiresDate: gracePeriodExpiresDate,
      isInBillingRetryPeriod: isInBillingRetryPeriod,
      appTransactionId: latest.appTransactionId,
      appAccountToken: latest.appAccountToken)
  }
}
