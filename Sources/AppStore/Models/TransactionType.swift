/// The kind of in-app purchase (`type`).
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum TransactionType: String, Sendable, Codable, CaseIterable {
  case autoRenewableSubscription = "Auto-Renewable Subscription"
  case nonConsumable = "Non-Consumable"
  case consumable = "Consumable"
  case nonRenewingSubscription = "Non-Renewing Subscription"
}
