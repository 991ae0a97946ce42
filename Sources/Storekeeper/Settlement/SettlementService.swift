import AppStore
import HTTP
import Postgres

/// Settles an order with a verified Apple transaction, exactly once: the transaction row, the
/// order's state change, its ledger credits, its history and the report's outcome commit
/// together or not at all.
struct SettlementService: Sendable {
  let database: PostgresPool
  /// Called after a commit that recorded a transaction, so deferred notifications apply.
  let transactionRecorded: @Sendable () -> Void

  func settle(
    tradeNo: String, transaction: VerifiedTransaction, source: String, cause: String,
    reportId: Int64?
  ) async throws -> SettledOrder {
    let answer = try await database.withTransaction { tx in
      try await settle(
        tradeNo: tradeNo, transaction: transaction, source: source, cause: cause,
        reportId: reportId, on: tx)
    }
    transactionRecorded()
    return answer
  }

  func settle(
    tradeNo: String, transaction: VerifiedTransaction, source: String, cause: String,
    reportId: Int64?,
    on tx: PostgresTransaction
  ) async throws -> SettledOrder {
    guard
      let order = try await tx.query(
        "SELECT \(unescaped: Order.columns) FROM orders WHERE trade_no = \(tradeNo) FOR UPDATE"
      ).first.map(Order.init(row:))
    else { throw HTTPError(404, code: "order_not_found", detail: "no order \(tradeNo)") }
    let product = try await Self.product(order.productId, on: tx)

    if order.tradeStatus == Order.tradeSuccess {
      guard order.transactionId == transaction.transactionId else {
        throw HTTPError(
          409, code: "order_already_paid",
          detail: "order \(tradeNo) was paid by another transaction")
      }
      try await markReports(tradeNo: tradeNo, on: tx)
      return SettledOrder(
        order: order,
        delivery: Delivery(
          product: product, quantity: order.quantity, transactionId: order.transactionId))
    }
    if order.closeReason == "refunded" || order.closeReason == "revoked" {
      throw HTTPError(409, code: "order_refunded", detail: "order \(tradeNo) was refunded by Apple")
    }

    if let existing = try await TransactionRecord.insertOrLock(transaction, source: source, on: tx)
    {
      if let owner = existing.tradeNo, owner != tradeNo {
        throw HTTPError(
          409, code: "transaction_already_used",
          detail: "Apple transaction \(transaction.transactionId) already settled another order")
      }
    }
    try await tx.execute(
      """
      UPDATE apple_transactions SET trade_no = \(tradeNo), user_id = \(order.userId)
      WHERE transaction_id = \(transaction.transactionId)
      """)
    let rows = try await tx.query(
      """
      UPDATE orders SET trade_status = 'TRADE_SUCCESS', paid_at = now(), updated_at = now(),
        transaction_id = \(transaction.transactionId), environment = \(transaction.environment),
        verification = NULL, close_reason = NULL, closed_at = NULL
      WHERE trade_no = \(tradeNo) RETURNING \(unescaped: Order.columns)
      """)
    guard let row = rows.first else { throw HTTPError(500, code: "internal_error") }
    let settled = try Order(row: row)
    let reopened = order.tradeStatus == Order.tradeClosed
    let detail = try JSONCoding.text(
      JSONValue.object([
        "transaction_id": .string(transaction.transactionId),
        "environment": .string(transaction.environment),
        "previous_close_reason": order.closeReason.map(JSONValue.string) ?? .null,
      ]))
    try await tx.execute(
      """
      INSERT INTO order_events (trade_no, from_status, to_status, reason, cause, detail)
      VALUES (\(tradeNo), \(order.tradeStatus), 'TRADE_SUCCESS',
              \(reopened ? "reopened_by_payment" : "paid"), \(cause), \(detail)::jsonb)
      """)
    try await credit(
      order: settled, product: product, transactionId: transaction.transactionId, kind: "grant",
      sign: 1, on: tx)
    try await markReports(tradeNo: tradeNo, on: tx)
    if let reportId {
      try await tx.execute(
        "UPDATE trade_reports SET outcome = 'settled', next_attempt_at = NULL, updated_at = now() WHERE id = \(reportId)"
      )
    }
    // Notifications that arrived before this transaction was known can apply now.
    try await tx.execute(
      """
      UPDATE apple_notifications SET state = 'pending'
      WHERE state = 'deferred' AND (transaction_id = \(transaction.transactionId)
                                    OR original_transaction_id = \(transaction.originalTransactionId))
      """)
    return SettledOrder(
      order: settled,
      delivery: Delivery(
        product: product, quantity: settled.quantity, transactionId: settled.transactionId))
  }

  /// Appends the order's balance grants to the ledger (negated for a refund).
  func credit(
    order: Order, product: Product, transactionId: String?, kind: String, sign: Int64,
    on tx: PostgresTransaction
  ) async throws {
    guard product.type == .consumable, let balance = product.grants.balance else { return }
    for (asset, amount) in balance.sorted(by: { $0.key < $1.key }) {
      try await tx.execute(
        """
        INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id)
        VALUES (\(order.userId), \(asset), \(sign * amount * Int64(order.quantity)), \(kind),
                \(order.tradeNo), \(transactionId))
        """)
    }
  }

  /// Every report of a paid order that still waits is settled by that payment.
  private func markReports(tradeNo: String, on tx: PostgresTransaction) async throws {
    try await tx.execute(
      """
      UPDATE trade_reports SET outcome = 'settled', next_attempt_at = NULL, updated_at = now()
      WHERE trade_no = \(tradeNo) AND outcome IN ('pending', 'received')
      """)
  }

  static func product(_ productId: String, on executor: any PostgresExecutor) async throws
    -> Product
  {
    guard
      let product = try await executor.query(
        "SELECT \(unescaped: Product.columns) FROM products WHERE product_id = \(productId)"
      ).first.map(Product.init(row:))
    else { throw HTTPError(500, code: "internal_error", detail: "an internal error occurred") }
    return product
  }
}
