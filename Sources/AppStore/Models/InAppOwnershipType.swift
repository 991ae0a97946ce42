/// Whether the user bought the item or has it through Family Sharing.
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum InAppOwnershipType: String, Sendable, Codable, CaseIterable {
  case familyShared = "FAMILY_SHARED"
  case purchased = "PURCHASED"
}
