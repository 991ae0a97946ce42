import AppStore

extension FakeSubscription {
  static let defaultGracePeriodSeconds: Int64 = 16 * 86_400

  /// What a lifecycle notification means for the subscription, so the signed renewal info,
  /// the status and later receipts agree with it. A period that the notification says has
  /// ended is cut to `now` when it still ran into the future.
  mutating func apply(
    notificationType type: String, subtype: String?, latest: inout FakeTransaction, now: Int64,
    gracePeriodSeconds: Int64?
  ) {
    func endPeriod() {
      if let expires = latest.expiresDate, expires > now { latest.expiresDate = now }
    }
    switch NotificationType(rawValue: type) {
    case .expired:
      endPeriod()
      autoRenewStatus = 0
      isInBillingRetryPeriod = false
      gracePeriodExpiresDate = nil
      expirationIntent = Self.expirationIntent(for: subtype)
    case .didFailToRenew:
      endPeriod()
      isInBillingRetryPeriod = true
      gracePeriodExpiresDate =
        subtype == NotificationSubtype.gracePeriod.rawValue
        ? now + (gracePeriodSeconds ?? Self.defaultGracePeriodSeconds) * 1000 : nil
    case .gracePeriodExpired:
      endPeriod()
      isInBillingRetryPeriod = true
      gracePeriodExpiresDate = min(gracePeriodExpiresDate ?? now, now)
    case .didChangeRenewalStatus:
      if subtype == NotificationSubtype.autoRenewDisabled.rawValue { autoRenewStatus = 0 }
      if subtype == NotificationSubtype.autoRenewEnabled.rawValue { autoRenewStatus = 1 }
    default:
      break
    }
  }

  private static func expirationIntent(for subtype: String?) -> Int32 {
    switch subtype.flatMap(NotificationSubtype.init(rawValue:)) {
    case .billingRetry: ExpirationIntent.billingError.rawValue
    case .priceIncrease: ExpirationIntent.customerDidNotConsentToPriceIncrease.rawValue
    case .productNotForSale: ExpirationIntent.productNotAvailable.rawValue
    default: ExpirationIntent.customerCancelled.rawValue
    }
  }
}
