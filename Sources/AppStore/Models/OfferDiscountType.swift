/// The payment mode of a subscription offer.
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum OfferDiscountType: String, Sendable, Codable, CaseIterable {
  case freeTrial = "FREE_TRIAL"
  case payAsYouGo = "PAY_AS_YOU_GO"
  case payUpFront = "PAY_UP_FRONT"
  case oneTime = "ONE_TIME"
}
