import Postgres

/// One `ledger` row as the user's own history shows it: what moved, why, and for a spend or
/// a backend grant what its caller said.
package struct WalletEntry: Encodable, Sendable {
  var id: Int64
  var asset: String
  var amount: Int64
  var kind: String
  var environment: String
  var tradeNo: String?
  var transactionId: String?
  var operationId: Int64?
  var reason: String?
  var reference: String?
  /// A refund's part recorded as debt (`REFUND_POLICY=debt`).
  var debt: Int64?
  var createdAt: String

  enum CodingKeys: String, CodingKey {
    case id, asset, amount, kind, environment
    case tradeNo = "trade_no"
    case transactionId = "transaction_id"
    case operationId = "operation_id"
    case reason, reference, debt
    case createdAt = "created_at"
  }

  static let columns = """
    l.id, l.asset, l.amount, l.kind, l.environment, l.trade_no, l.transaction_id,
    l.operation_id, o.reason, o.reference, nullif(l.debt, 0) AS debt,
    \(SQLTime.rfc3339("l.created_at", as: "created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    asset = try row.decode("asset")
    amount = try row.decode("amount")
    kind = try row.decode("kind")
    environment = try row.decode("environment")
    tradeNo = try row.decodeIfPresent("trade_no")
    transactionId = try row.decodeIfPresent("transaction_id")
    operationId = try row.decodeIfPresent("operation_id")
    reason = try row.decodeIfPresent("reason")
    reference = try row.decodeIfPresent("reference")
    debt = try row.decodeIfPresent("debt")
    createdAt = try row.decode("created_at")
  }
}
