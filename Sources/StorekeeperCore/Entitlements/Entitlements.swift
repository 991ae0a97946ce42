/// What a user owns now: balances (the ledger's running sums, `user_balances`), active
/// entitlements, and owned non-consumables.
package struct Entitlements: Codable, Sendable {
  struct Active: Codable, Sendable, Equatable {
    var entitlement: String
    /// nil: forever (a non-consumable's entitlement).
    var expiresAt: String?
    var productId: String
    var source: String
    /// Every purchase it rests on was made in Apple's sandbox (App Review, TestFlight).
    var sandbox: Bool

    enum CodingKeys: String, CodingKey {
      case entitlement
      case expiresAt = "expires_at"
      case productId = "product_id"
      case source, sandbox
    }
  }

  var userId: String
  package var balances: [String: Int64]
  /// The part of `balances` that sandbox purchases credited (only assets where it is not 0).
  var sandboxBalances: [String: Int64]
  var entitlements: [Active]
  var nonConsumables: [String]

  enum CodingKeys: String, CodingKey {
    case userId = "user_id"
    case balances, entitlements
    case sandboxBalances = "sandbox_balances"
    case nonConsumables = "non_consumables"
  }
}
