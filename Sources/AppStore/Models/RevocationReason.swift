/// Why Apple refunded or revoked a transaction.
///
/// Payloads keep Apple's raw number; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum RevocationReason: Int32, Sendable, Codable, CaseIterable {
  case other = 0
  case appIssue = 1
}
