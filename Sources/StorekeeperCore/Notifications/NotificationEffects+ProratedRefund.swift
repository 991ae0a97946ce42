import AppStore
import Postgres

extension NotificationEffects {
  /// Apple's prorated refund of a one-time purchase (`revocationType` REFUND_PRORATED with
  /// `revocationPercentage` below 100000, as Apple may grant when a consumption answer said
  /// part was used): takes back that share of what the purchase credited, under
  /// `REFUND_POLICY`, less what earlier prorated refunds of it took (Apple's percentage counts
  /// from the whole purchase, so the cumulative share is rounded once: `RefundShare.prorated`),
  /// and writes `purchase.refunded` with `refund_type` `partial`. The order stays paid and the
  /// purchase live: the rest was used. Nil for anything else (a full refund, a subscription's,
  /// whose access it ends, or a purchase whose order is not paid yet), which `revoke` takes as a
  /// full refund.
  func proratedRefund(_ transaction: VerifiedTransaction, notice: [String: JSONValue])
    async throws -> NotificationOutcome?
  {
    guard transaction.revocationType == "REFUND_PRORATED",
      let share = transaction.revocationPercentage, (1..<100_000).contains(share),
      transaction.type != "Auto-Renewable Subscription"
    else { return nil }
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known, let order, order.tradeStatus == .tradeSuccess else { return nil }
    // The row is locked (`lockedOrder`): a refund delivered again, or two at once, takes once.
    let before: Int32 =
      try await tx.query(
        """
        SELECT refunded_milliunits FROM apple_transactions
        WHERE transaction_id = \(transaction.transactionId)
        """
      ).first?.decode("refunded_milliunits") ?? 0
    guard Int32(share) > before else { return .processed(.partiallyRefunded) }
    // Charted at Apple's instant of the refund, as a full one is (`revocation_date`).
    let refundedAt = transaction.revocationDate ?? clock.milliseconds
    var update: PostgresQuery = "UPDATE apple_transactions SET refunded_milliunits = \(Int32(share))"
    update.append(", prorated_refunded_at = ")
    update.append(TransactionRecord.time(refundedAt))
    update.append(" WHERE transaction_id = \(transaction.transactionId)")
    try await tx.execute(update)
    let policy = settlement.refundPolicy
    let recovery = try await RefundRecovery.planShare(
      order.tradeNo, .prorated(milliunits: Int32(share), before: before), userId: order.userId,
      on: tx, outbox: outbox)
    try await tx.execute(
      Ledger.refundShare(
        tradeNo: order.tradeNo, .prorated(milliunits: Int32(share), before: before),
        transactionId: transaction.transactionId, policy: policy))
    var refunded = notice
    refunded["trade_no"] = .string(order.tradeNo)
    refunded["refund_type"] = .string("partial")
    refunded["revocation_type"] = .string("REFUND_PRORATED")
    refunded["revocation_percentage"] = .number(String(share))
    refunded["revocation_date"] = EventTime.value(ms: refundedAt)
    if !recovery.isEmpty { refunded["recovery"] = RefundRecovery.json(recovery, policy: policy) }
    try await outbox.append(
      [EventDraft(.purchaseRefunded, refunded.filter { $0.value != .null })], for: order.userId,
      cause: refunded, on: tx)
    return .processed(.partiallyRefunded)
  }

  /// Apple's REFUND_REVERSED of a paid one-time purchase whose prorated refunds took shares:
  /// gives back what they took, where they took it, and cancels what they left owed, as the
  /// reversal of a full refund does (`reinstate`); the order was paid all along. Followed back
  /// through admin transfers (`storekeeper_prorated_refunds_taken`): a refund before a transfer
  /// is the old order's rows, the transfer moved only what it left, and the share is reset for
  /// the whole purchase, so the current owner gets that part back. False when no share was
  /// taken.
  func reverseProratedRefunds(
    _ order: Order, _ transaction: VerifiedTransaction, notice: [String: JSONValue]
  ) async throws -> Bool {
    // The order's row is locked (`lockedOrder`): a reversal delivered again gives back once.
    let taken = try await tx.query(
      """
      UPDATE apple_transactions SET refunded_milliunits = 0, prorated_refunded_at = NULL
      WHERE transaction_id = \(transaction.transactionId) AND refunded_milliunits > 0
      RETURNING 1
      """)
    guard !taken.isEmpty else { return false }
    let chain = try await tx.query(
      """
      SELECT c.trade_no, o.user_id FROM storekeeper_transfer_chain(\(order.tradeNo)) c
      JOIN orders o ON o.trade_no = c.trade_no
      """)
    var tradeNos = [order.tradeNo]
    var users = [order.userId]
    for row in chain {
      let tradeNo: String = try row.decode("trade_no")
      if tradeNo != order.tradeNo { tradeNos.append(tradeNo) }
      users.append(try row.decode("user_id"))
    }
    // The users' locks before the debt rows, as `reinstate` takes them: a debt an earlier
    // owner's refund left is that owner's.
    try await outbox.lock(users, on: tx)
    for tradeNo in tradeNos { try await Ledger.cancelDebts(tradeNo: tradeNo, on: tx) }
    try await tx.execute(
      """
      INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment)
      SELECT \(order.userId), t.asset, t.amount, \(LedgerKind.refundReversed), \(order.tradeNo),
             \(transaction.transactionId), t.environment
      FROM storekeeper_prorated_refunds_taken(\(order.tradeNo)) t
      """)
    var reversed = notice
    reversed["trade_no"] = .string(order.tradeNo)
    reversed["refund_type"] = .string("partial")
    try await outbox.append(
      [EventDraft(.purchaseRefundReversed, reversed)], for: order.userId, cause: reversed, on: tx)
    return true
  }
}
