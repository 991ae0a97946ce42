import Postgres

extension Ledger {
  /// A refund of `units` of the `quantity` order `tradeNo` paid for (Google's quantity-based
  /// partial refunds, and the full refund of what they left): `Ledger.refund`'s rows and
  /// `REFUND_POLICY`, over `storekeeper_refund_plan_share`, that share of what the order's
  /// credits gave.
  static func refundShare(
    tradeNo: String, units: Int32, quantity: Int32, transactionId: String, policy: RefundPolicy
  ) -> PostgresQuery {
    """
    INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment, debt)
    SELECT p.user_id, p.asset,
           -(CASE WHEN \(policy)::text = 'debt' THEN p.recovered ELSE p.owed END),
           \(LedgerKind.refund), \(tradeNo), \(transactionId), p.environment,
           CASE WHEN \(policy)::text = 'debt' THEN p.owed - p.recovered ELSE 0 END
    FROM storekeeper_refund_plan_share(\(tradeNo), \(units)::integer, \(quantity)::integer) AS p
    """
  }
}

extension RefundRecovery {
  /// What `Ledger.refundShare` will take, per asset, for the refund's event.
  static func planShare(
    _ tradeNo: String, units: Int32, quantity: Int32, userId: String, on tx: PostgresTransaction,
    outbox: EventOutbox
  ) async throws -> [RefundRecovery] {
    try await outbox.lock([userId], on: tx)
    return try await tx.query(
      """
      SELECT asset, environment, owed, recovered
      FROM storekeeper_refund_plan_share(\(tradeNo), \(units)::integer, \(quantity)::integer)
      ORDER BY asset, environment
      """
    ).map { row in
      RefundRecovery(
        asset: try row.decode("asset"), environment: try row.decode("environment"),
        owed: try row.decode("owed"), recovered: try row.decode("recovered"))
    }
  }
}
