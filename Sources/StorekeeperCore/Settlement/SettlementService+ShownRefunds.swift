import AppStore
import Postgres

// A refund whose REFUND notification never arrived (72 hours of Apple's retries missed, a
// sandbox notification sent once) left the order paid and the access granted, while the
// app's next restore listed the purchase revoked in the same answer. Apple's signed
// transaction saying refunded is Apple's word too, and the next proof the app posts carries it.
extension SettlementService {
  /// Applies the refund each of `transactions` shows, as its notification would have, when
  /// Storekeeper recorded the purchase for someone and no refund of it: each in a database
  /// transaction of its own, committed whatever the post that carried it comes to. Only an
  /// Apple-signed transaction counts (a receipt's `cancellation_date` also marks a period
  /// upgraded from), not a prorated share (its notification says how much), and not when
  /// Apple's last refund notification for it is a reversal or the order was refunded before
  /// (the proof is older news).
  func applyRefundsShown(by transactions: [VerifiedTransaction], cause: OrderEventCause)
    async throws
  {
    for transaction in transactions where Self.showsRefund(transaction) {
      try await database.withTransaction { tx in
        guard
          let known = try await TransactionRecord.find(transaction.transactionId, on: tx),
          known.userId != nil, let tradeNo = known.tradeNo, !known.revoked,
          try await !RefundHistory.reversed(transaction.transactionId, on: tx),
          try await !Self.everRefunded(tradeNo, on: tx)
        else { return }
        let effects = NotificationEffects(
          settlement: self, catalog: CatalogRepository(database: database), clock: reports.clock,
          tx: tx, uuid: "", cause: cause,
          eventDetail: .object(["shown_by": .string("signed_transaction")]),
          source: .signedTransaction)
        var notice: [String: JSONValue] = [
          "transaction_id": .string(transaction.transactionId),
          "original_transaction_id": .string(transaction.originalTransactionId),
          "product_id": .string(transaction.productId), "shown_by": .string("signed_transaction"),
        ]
        if let expires = transaction.expiresDate {
          notice["expires_at"] = EventTime.value(ms: expires)
        }
        _ = try await effects.revoke(
          transaction, reason: transaction.isFamilyShared ? .revoked : .refunded, notice: notice)
      }
    }
  }

  /// Whether the order was refunded or revoked before, by any path: paid again since, Apple
  /// reversed that refund (a notification, or a reconcile repair, which stores none), so a
  /// proof that says refunded is older news and must not take it back again.
  static func everRefunded(_ tradeNo: String, on tx: PostgresTransaction) async throws -> Bool {
    try await !tx.query(
      """
      SELECT 1 FROM order_events
      WHERE trade_no = \(tradeNo)
        AND reason IN (\(OrderEventReason.refunded), \(OrderEventReason.revoked))
      LIMIT 1
      """
    ).isEmpty
  }

  static func showsRefund(_ transaction: VerifiedTransaction) -> Bool {
    transaction.revocationDate != nil && source(of: transaction) == .signedTransaction
      && transaction.revocationType != "REFUND_PRORATED"
  }
}
