import Postgres

extension Ledger {
  /// A partial refund of order `tradeNo` (`RefundShare`): `Ledger.refund`'s rows and
  /// `REFUND_POLICY`, over the share's plan.
  static func refundShare(
    tradeNo: String, _ share: RefundShare, transactionId: String, policy: RefundPolicy
  ) -> PostgresQuery {
    """
    INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment, debt)
    SELECT p.user_id, p.asset,
           -(CASE WHEN \(policy)::text = 'debt' THEN p.recovered ELSE p.owed END),
           \(LedgerKind.refund), \(tradeNo), \(transactionId), p.environment,
           CASE WHEN \(policy)::text = 'debt' THEN p.owed - p.recovered ELSE 0 END
    FROM \(share.plan(tradeNo)) AS p
    """
  }
}

extension RefundRecovery {
  /// What `Ledger.refundShare` will take, per asset, for the refund's event.
  static func planShare(
    _ tradeNo: String, _ share: RefundShare, userId: String, on tx: PostgresTransaction,
    outbox: EventOutbox
  ) async throws -> [RefundRecovery] {
    try await outbox.lock([userId], on: tx)
    return try await tx.query(
      """
      SELECT asset, environment, owed, recovered
      FROM \(share.plan(tradeNo))
      ORDER BY asset, environment
      """
    ).map { row in
      RefundRecovery(
        asset: try row.decode("asset"), environment: try row.decode("environment"),
        owed: try row.decode("owed"), recovered: try row.decode("recovered"))
    }
  }
}
