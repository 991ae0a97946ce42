import Postgres

/// Everything known about one order, for support: its history, the reports clients sent,
/// the Apple transaction that paid it and the notifications that touched it.
package struct OrderDetail: Encodable, Sendable {
  var order: Order
  var history: [OrderEvent]
  var reports: [JSONValue]
  var transactions: [JSONValue]
  var notifications: [JSONValue]

  package static func load(_ order: Order, database: PostgresPool, orders: OrderRepository)
    async throws
    -> OrderDetail
  {
    let history = try await orders.events(order.tradeNo)
    let reports = try await database.query(
      """
      SELECT json_strip_nulls(json_build_object('id', id, 'trade_status', trade_status, 'proof_kind', proof_kind,
        'reason', reason, 'outcome', outcome, 'outcome_code', outcome_code, 'attempts', attempts,
        'next_attempt_at', \(unescaped: SQLTime.text("next_attempt_at")), 'last_error', last_error, 'created_at', \(unescaped: SQLTime.text("created_at")),
        'updated_at', \(unescaped: SQLTime.text("updated_at"))))::text AS doc
      FROM trade_reports WHERE trade_no = \(order.tradeNo) ORDER BY id
      """)
    let transactions = try await database.query(
      """
      SELECT json_strip_nulls(json_build_object('transaction_id', transaction_id,
        'original_transaction_id', original_transaction_id, 'product_id', product_id,
        'environment', environment, 'quantity', quantity, 'type', type,
        'purchase_date', \(unescaped: SQLTime.text("purchase_date")), 'expires_date', \(unescaped: SQLTime.text("expires_date")),
        'revocation_date', \(unescaped: SQLTime.text("revocation_date")), 'source', source, 'created_at', \(unescaped: SQLTime.text("created_at"))))::text AS doc,
        created_at
      FROM apple_transactions WHERE trade_no = \(order.tradeNo)
      UNION ALL
      -- Google Play's purchase, its token shortened: enough to find it, not to hand around.
      SELECT json_strip_nulls(json_build_object('store', 'google_play', 'transaction_id', order_id,
        'original_transaction_id', left(purchase_token, 12) || '…', 'product_id', product_id,
        'environment', environment, 'quantity', quantity, 'type', kind,
        'purchase_date', \(unescaped: SQLTime.text("purchase_time")), 'expires_date', \(unescaped: SQLTime.text("expiry_time")),
        'revocation_date', \(unescaped: SQLTime.text("revoked_at")), 'source', 'google_play', 'created_at', \(unescaped: SQLTime.text("created_at"))))::text AS doc,
        created_at
      FROM google_purchases WHERE trade_no = \(order.tradeNo)
      ORDER BY created_at
      """)
    let notifications = try await database.query(
      """
      SELECT json_strip_nulls(json_build_object('notification_uuid', n.notification_uuid,
        'notification_type', n.notification_type, 'subtype', n.subtype, 'state', n.state,
        'result', n.result, 'received_at', \(unescaped: SQLTime.text("n.received_at")), 'processed_at', \(unescaped: SQLTime.text("n.processed_at"))))::text AS doc
      FROM apple_notifications n
      WHERE n.transaction_id IN (SELECT transaction_id FROM apple_transactions WHERE trade_no = \(order.tradeNo))
      ORDER BY n.received_at
      """)
    func docs(_ rows: [PostgresRow]) throws -> [JSONValue] {
      try rows.map { try JSONValue(databaseText: try $0.decode("doc")) }
    }
    return OrderDetail(
      order: order, history: history, reports: try docs(reports),
      transactions: try docs(transactions), notifications: try docs(notifications))
  }
}
