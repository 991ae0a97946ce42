import Postgres

/// One `ledger` row as the admin API shows it.
package struct LedgerEntry: Encodable, Sendable {
  var id: Int64
  var asset: String
  var amount: Int64
  var kind: String
  var tradeNo: String?
  var transactionId: String?
  var adjustmentId: Int64?
  var environment: String
  var createdAt: String

  enum CodingKeys: String, CodingKey {
    case id, asset, amount, kind
    case tradeNo = "trade_no"
    case transactionId = "transaction_id"
    case adjustmentId = "adjustment_id"
    case environment
    case createdAt = "created_at"
  }

  static let columns = """
    id, asset, amount, kind, trade_no, transaction_id, adjustment_id, environment,
    \(SQLTime.rfc3339("created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    asset = try row.decode("asset")
    amount = try row.decode("amount")
    kind = try row.decode("kind")
    tradeNo = try row.decodeIfPresent("trade_no")
    transactionId = try row.decodeIfPresent("transaction_id")
    adjustmentId = try row.decodeIfPresent("adjustment_id")
    environment = try row.decode("environment")
    createdAt = try row.decode("created_at")
  }
}
