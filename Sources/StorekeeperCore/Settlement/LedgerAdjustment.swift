import Postgres

/// One manual adjustment of a user's balance: who, why, how much, as `ledger_adjustments`
/// keeps it.
package struct LedgerAdjustment: Encodable, Sendable {
  package var id: Int64
  var userId: String
  var asset: String
  var amount: Int64
  var environment: String
  var reason: String
  var admin: String
  var createdAt: String

  enum CodingKeys: String, CodingKey {
    case id
    case userId = "user_id"
    case asset, amount, environment, reason, admin
    case createdAt = "created_at"
  }

  static let columns = """
    id, user_id, asset, amount, environment, reason, admin, \(SQLTime.rfc3339("created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    userId = try row.decode("user_id")
    asset = try row.decode("asset")
    amount = try row.decode("amount")
    environment = try row.decode("environment")
    reason = try row.decode("reason")
    admin = try row.decode("admin")
    createdAt = try row.decode("created_at")
  }
}
