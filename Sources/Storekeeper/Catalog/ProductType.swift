/// The four kinds of in-app product, as the API spells them.
enum ProductType: String, Codable, Sendable, CaseIterable {
  case consumable
  case nonConsumable = "non_consumable"
  case autoRenewable = "auto_renewable"
  case nonRenewing = "non_renewing"

  /// Apple's spelling in signed transactions.
  var appleType: String {
    switch self {
    case .consumable: "Consumable"
    case .nonConsumable: "Non-Consumable"
    case .autoRenewable: "Auto-Renewable Subscription"
    case .nonRenewing: "Non-Renewing Subscription"
    }
  }
}
