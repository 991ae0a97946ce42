/// What a user owns now: balances summed from the ledger, active entitlements, and owned
/// non-consumables.
struct Entitlements: Encodable, Sendable {
  struct Active: Encodable, Sendable, Equatable {
    var entitlement: String
    /// nil: forever (a non-consumable's entitlement).
    var expiresAt: String?
    var productId: String
    var source: String

    enum CodingKeys: String, CodingKey {
      case entitlement
      case expiresAt = "expires_at"
      case productId = "product_id"
      case source
    }
  }

  var userId: String
  var balances: [String: Int64]
  var entitlements: [Active]
  var nonConsumables: [String]

  enum CodingKeys: String, CodingKey {
    case userId = "user_id"
    case balances, entitlements
    case nonConsumables = "non_consumables"
  }
}
