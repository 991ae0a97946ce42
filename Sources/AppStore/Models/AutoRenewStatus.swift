/// Whether a subscription renews automatically.
///
/// Payloads keep Apple's raw number; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum AutoRenewStatus: Int32, Sendable, Codable, CaseIterable {
  case off = 0
  case on = 1
}
