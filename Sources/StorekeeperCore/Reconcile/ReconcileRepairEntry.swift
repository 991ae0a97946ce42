import Postgres

/// One `reconcile_repairs` row as `GET /admin/v1/reconcile/repairs` shows it.
package struct ReconcileRepairEntry: Encodable, Sendable {
  var id: Int64
  var runId: Int64
  var trigger: String
  var userId: String
  var originalTransactionId: String
  var transactionId: String
  var kind: String
  var was: JSONValue
  var became: JSONValue
  var createdAt: String

  enum CodingKeys: String, CodingKey {
    case id, trigger, kind, was, became
    case runId = "run_id"
    case userId = "user_id"
    case originalTransactionId = "original_transaction_id"
    case transactionId = "transaction_id"
    case createdAt = "created_at"
  }

  static let columns = """
    r.id, r.run_id, u.trigger, r.user_id, r.original_transaction_id, r.transaction_id, r.kind,
    r.was::text AS was, r.became::text AS became, \(SQLTime.rfc3339("r.created_at", as: "created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    runId = try row.decode("run_id")
    trigger = try row.decode("trigger")
    userId = try row.decode("user_id")
    originalTransactionId = try row.decode("original_transaction_id")
    transactionId = try row.decode("transaction_id")
    kind = try row.decode("kind")
    was = try JSONValue(databaseText: try row.decode("was"))
    became = try JSONValue(databaseText: try row.decode("became"))
    createdAt = try row.decode("created_at")
  }
}
