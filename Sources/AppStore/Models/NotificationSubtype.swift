/// The subtype that details a notification type.
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum NotificationSubtype: String, Sendable, Codable, CaseIterable {
  case initialBuy = "INITIAL_BUY"
  case resubscribe = "RESUBSCRIBE"
  case downgrade = "DOWNGRADE"
  case upgrade = "UPGRADE"
  case autoRenewEnabled = "AUTO_RENEW_ENABLED"
  case autoRenewDisabled = "AUTO_RENEW_DISABLED"
  case voluntary = "VOLUNTARY"
  case billingRetry = "BILLING_RETRY"
  case priceIncrease = "PRICE_INCREASE"
  case gracePeriod = "GRACE_PERIOD"
  case pending = "PENDING"
  case accepted = "ACCEPTED"
  case billingRecovery = "BILLING_RECOVERY"
  case productNotForSale = "PRODUCT_NOT_FOR_SALE"
  case summary = "SUMMARY"
  case failure = "FAILURE"
  case unreported = "UNREPORTED"
  case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
  case created = "CREATED"
}
