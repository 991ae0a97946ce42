import Postgres

/// How much of one credit (a purchase, a reward, an adjustment) a debit used.
package struct LotUse: Encodable, Sendable, Equatable {
  var amount: Int64
  var environment: String
  /// The purchase's order; nil for a reward or an adjustment.
  var tradeNo: String?
  var transactionId: String?
  /// The ledger row that credited it.
  var creditId: Int64

  enum CodingKeys: String, CodingKey {
    case amount, environment
    case tradeNo = "trade_no"
    case transactionId = "transaction_id"
    case creditId = "credit_id"
  }

  /// The uses of the debit rows `debits` selects (`debits` yields ledger ids), oldest lot first.
  static func of(debits: PostgresQuery, on executor: any PostgresExecutor) async throws
    -> [LotUse]
  {
    var query: PostgresQuery = """
      SELECT sum(u.amount)::bigint AS amount, l.environment, l.trade_no, c.transaction_id,
             l.ledger_id
      FROM ledger_lot_uses u JOIN ledger_lots l ON l.id = u.lot_id
      LEFT JOIN ledger c ON c.id = l.ledger_id
      WHERE u.ledger_id IN (
      """
    query.append(debits)
    query.append(
      ") GROUP BY l.id, l.environment, l.trade_no, c.transaction_id, l.ledger_id ORDER BY l.id")
    return try await executor.query(query).map { row in
      LotUse(
        amount: try row.decode("amount"), environment: try row.decode("environment"),
        tradeNo: try row.decodeIfPresent("trade_no"),
        transactionId: try row.decodeIfPresent("transaction_id"),
        creditId: try row.decode("ledger_id"))
    }
  }

  var json: JSONValue {
    var object: [String: JSONValue] = [
      "amount": .number(String(amount)), "environment": .string(environment),
      "credit_id": .number(String(creditId)),
    ]
    if let tradeNo { object["trade_no"] = .string(tradeNo) }
    if let transactionId { object["transaction_id"] = .string(transactionId) }
    return .object(object)
  }
}
