import AppStore
import Foundation
import HTTP
import Postgres

/// What one notification does to orders, the ledger and subscriptions, inside the caller's
/// database transaction. Returns the notification's new state and a short result.
struct NotificationEffects {
  let settlement: SettlementService
  let tx: PostgresTransaction
  let uuid: String

  func apply(_ stored: StoredNotification) async throws -> (state: String, result: String) {
    let type = stored.notification.notificationType
    let transaction = stored.transaction?.verifiedTransaction
    switch type {
    case "REFUND", "REVOKE":
      guard let transaction else { return ("processed", "no_transaction") }
      return try await revoke(transaction, reason: type == "REFUND" ? "refunded" : "revoked")
    case "REFUND_REVERSED":
      guard let transaction else { return ("processed", "no_transaction") }
      return try await reinstate(transaction)
    case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED":
      guard let transaction else { return ("processed", "no_transaction") }
      return try await renew(transaction)
    case "EXPIRED", "GRACE_PERIOD_EXPIRED":
      let original = transaction?.originalTransactionId ?? stored.renewalInfo?.originalTransactionId
      if let transaction { try await updateDates(transaction) }
      if let original { try await subscriptionState(original, status: "expired", graceMs: nil) }
      return ("processed", "expired")
    case "DID_FAIL_TO_RENEW":
      let original = transaction?.originalTransactionId ?? stored.renewalInfo?.originalTransactionId
      guard let original else { return ("processed", "no_transaction") }
      // The period that just ended is Apple's; a grace period extends access beyond it.
      if let transaction { try await updateDates(transaction) }
      if stored.notification.subtype == "GRACE_PERIOD",
        let grace = stored.renewalInfo?.gracePeriodExpiresDate
      {
        try await subscriptionState(original, status: "grace_period", graceMs: grace)
        return ("processed", "grace_period")
      }
      try await subscriptionState(original, status: "billing_retry", graceMs: nil)
      return ("processed", "billing_retry")
    case "CONSUMPTION_REQUEST":
      return ("processed", "listed_for_admins")
    case "TEST":
      return ("processed", "test")
    default:
      return ("processed", "ignored")
    }
  }

  /// The recorded transaction and its order, both locked; nil when the transaction is unknown.
  private func lockedOrder(_ transactionId: String) async throws -> (known: Bool, order: Order?) {
    let rows = try await tx.query(
      "SELECT trade_no FROM apple_transactions WHERE transaction_id = \(transactionId) FOR UPDATE")
    guard let row = rows.first else { return (false, nil) }
    guard let tradeNo: String = try row.decodeIfPresent("trade_no") else { return (true, nil) }
    let order = try await tx.query(
      "SELECT \(unescaped: Order.columns) FROM orders WHERE trade_no = \(tradeNo) FOR UPDATE"
    ).first.map(Order.init(row:))
    return (true, order)
  }

  private func revoke(_ transaction: VerifiedTransaction, reason: String) async throws -> (
    String, String
  ) {
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known else { return ("deferred", "transaction_unknown") }
    var revocation: PostgresQuery = "UPDATE apple_transactions SET revocation_date = "
    revocation.append(
      TransactionRecord.time(
        transaction.revocationDate ?? Int64(Date.now.timeIntervalSince1970 * 1000)))
    revocation.append(
      ", revocation_reason = \(transaction.revocationReason) WHERE transaction_id = \(transaction.transactionId)"
    )
    try await tx.execute(revocation)
    // Known but not yet anyone's (a legacy receipt posted without a user): wait, like an
    // unknown transaction, until settlement gives it an order; then the refund applies.
    guard let order else { return ("deferred", "transaction_has_no_order") }
    guard order.tradeStatus == Order.tradeSuccess else {
      return ("processed", "already_closed")
    }
    try await transition(order, to: Order.tradeClosed, closeReason: reason, event: reason)
    let product = try await SettlementService.product(order.productId, on: tx)
    try await settlement.credit(
      order: order, product: product, transactionId: transaction.transactionId, kind: "refund",
      sign: -1, on: tx)
    return ("processed", reason)
  }

  private func reinstate(_ transaction: VerifiedTransaction) async throws -> (String, String) {
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known else { return ("deferred", "transaction_unknown") }
    try await tx.execute(
      "UPDATE apple_transactions SET revocation_date = NULL, revocation_reason = NULL WHERE transaction_id = \(transaction.transactionId)"
    )
    guard let order else { return ("deferred", "transaction_has_no_order") }
    guard order.tradeStatus == Order.tradeClosed,
      order.closeReason == "refunded" || order.closeReason == "revoked"
    else { return ("processed", "not_refunded") }
    try await transition(order, to: Order.tradeSuccess, closeReason: nil, event: "refund_reversed")
    let product = try await SettlementService.product(order.productId, on: tx)
    try await settlement.credit(
      order: order, product: product, transactionId: transaction.transactionId,
      kind: "refund_reversed", sign: 1, on: tx)
    return ("processed", "refund_reversed")
  }

  /// A renewal nobody reported still counts: it is recorded, and settles an order of its own
  /// for the user who owns the original transaction.
  private func renew(_ transaction: VerifiedTransaction) async throws -> (String, String) {
    let (known, _) = try await lockedOrder(transaction.transactionId)
    if known {
      try await updateDates(transaction)
      try await subscriptionState(transaction.originalTransactionId, status: "active", graceMs: nil)
      return ("processed", "dates_updated")
    }
    guard
      let owner = try await tx.query(
        """
        SELECT user_id FROM apple_transactions
        WHERE original_transaction_id = \(transaction.originalTransactionId) AND user_id IS NOT NULL
        ORDER BY purchase_date DESC LIMIT 1
        """
      ).first, let userId: String = try owner.decodeIfPresent("user_id")
    else { return ("deferred", "original_transaction_unknown") }
    let tradeNo = TradeNumber.make()
    let inserted = try await tx.execute(
      """
      INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                          app_account_token, trade_status, origin, expires_at)
      SELECT \(tradeNo), \(userId), product_id, 1, price, currency, price, gen_random_uuid(),
             'WAIT_BUYER_PAY', 'renewal', now()
      FROM products WHERE product_id = \(transaction.productId)
      """)
    guard inserted == 1 else { return ("processed", "unknown_product") }
    try await tx.execute(
      """
      INSERT INTO order_events (trade_no, to_status, reason, cause, detail)
      VALUES (\(tradeNo), 'WAIT_BUYER_PAY', 'created_for_renewal', 'notification',
              jsonb_build_object('notification_uuid', \(uuid)::text))
      """)
    _ = try await settlement.settle(
      tradeNo: tradeNo, transaction: transaction, source: "notification", cause: "notification",
      reportId: nil, on: tx)
    try await subscriptionState(transaction.originalTransactionId, status: "active", graceMs: nil)
    return ("processed", "renewal_recorded")
  }

  private func updateDates(_ transaction: VerifiedTransaction) async throws {
    var query: PostgresQuery = "UPDATE apple_transactions SET expires_date = "
    query.append(TransactionRecord.time(transaction.expiresDate))
    query.append(" WHERE transaction_id = \(transaction.transactionId)")
    try await tx.execute(query)
  }

  private func subscriptionState(_ original: String, status: String, graceMs: Int64?) async throws {
    var query: PostgresQuery = """
      INSERT INTO subscription_states (original_transaction_id, status, grace_expires_at)
      VALUES (\(original), \(status),
      """
    query.append(TransactionRecord.time(graceMs))
    query.append(
      """
      ) ON CONFLICT (original_transaction_id) DO UPDATE
        SET status = EXCLUDED.status, grace_expires_at = EXCLUDED.grace_expires_at, updated_at = now()
      """)
    try await tx.execute(query)
  }

  private func transition(_ order: Order, to status: String, closeReason: String?, event: String)
    async throws
  {
    try await tx.execute(
      """
      UPDATE orders SET trade_status = \(status), close_reason = \(closeReason), updated_at = now(),
        closed_at = CASE WHEN \(status) = 'TRADE_CLOSED' THEN now() END
      WHERE trade_no = \(order.tradeNo)
      """)
    try await tx.execute(
      """
      INSERT INTO order_events (trade_no, from_status, to_status, reason, cause, detail)
      VALUES (\(order.tradeNo), \(order.tradeStatus), \(status), \(event), 'notification',
              jsonb_build_object('notification_uuid', \(uuid)::text))
      """)
  }
}
