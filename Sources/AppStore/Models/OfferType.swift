/// The kind of subscription offer.
///
/// Payloads keep Apple's raw number; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum OfferType: Int32, Sendable, Codable, CaseIterable {
  case introductory = 1
  case promotional = 2
  case subscriptionOfferCode = 3
  case winBack = 4
}
