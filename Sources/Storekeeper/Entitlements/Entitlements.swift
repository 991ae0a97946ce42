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
      case entitlement, expiresAt = "expires_at", productId = "product_id", source
    }
  }

  var userId: String
  var balances: [String: Int64]
  var entitlements: [Active]
  var nonConsumables: [String]

  enum CodingKeys: String, CodingKey {
    case userId = "user_id", balances, entitlements, nonConsumables = "non_consumables"
  }
}
