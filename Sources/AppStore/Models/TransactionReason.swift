/// Why a transaction exists: a purchase by the user or an automatic renewal.
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum TransactionReason: String, Sendable, Codable, CaseIterable {
  case purchase = "PURCHASE"
  case renewal = "RENEWAL"
}
