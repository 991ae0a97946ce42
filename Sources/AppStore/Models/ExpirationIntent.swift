/// Why a subscription expired.
///
/// Payloads keep Apple's raw number; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum ExpirationIntent: Int32, Sendable, Codable, CaseIterable {
  case customerCancelled = 1
  case billingError = 2
  case customerDidNotConsentToPriceIncrease = 3
  case productNotAvailable = 4
  case other = 5
}
