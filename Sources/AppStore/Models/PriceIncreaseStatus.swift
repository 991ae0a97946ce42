/// Whether the customer answered a subscription price increase.
///
/// Payloads keep Apple's raw number; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum PriceIncreaseStatus: Int32, Sendable, Codable, CaseIterable {
  case customerHasNotResponded = 0
  case customerConsentedOrWasNotifiedWithoutNeedingConsent = 1
}
