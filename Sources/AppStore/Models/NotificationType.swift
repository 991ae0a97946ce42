/// The type of an App Store Server Notification V2.
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum NotificationType: String, Sendable, Codable, CaseIterable {
  case subscribed = "SUBSCRIBED"
  case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
  case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
  case offerRedeemed = "OFFER_REDEEMED"
  case didRenew = "DID_RENEW"
  case expired = "EXPIRED"
  case didFailToRenew = "DID_FAIL_TO_RENEW"
  case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
  case priceIncrease = "PRICE_INCREASE"
  case refund = "REFUND"
  case refundDeclined = "REFUND_DECLINED"
  case consumptionRequest = "CONSUMPTION_REQUEST"
  case renewalExtended = "RENEWAL_EXTENDED"
  case revoke = "REVOKE"
  case test = "TEST"
  case renewalExtension = "RENEWAL_EXTENSION"
  case refundReversed = "REFUND_REVERSED"
  case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
  case oneTimeCharge = "ONE_TIME_CHARGE"
  case metadataUpdate = "METADATA_UPDATE"
  case migration = "MIGRATION"
  case priceChange = "PRICE_CHANGE"
  /// A parent or guardian withdrew consent for a minor to use the app (age assurance); the
  /// notification carries `appData`, not `data`.
  case rescindConsent = "RESCIND_CONSENT"
}
