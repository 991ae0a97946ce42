import Postgres

extension Ledger {
  /// The ledger row of a manual adjustment: the amount as the admin gave it (either sign),
  /// tied to its `ledger_adjustments` row and to no order.
  static func adjust(_ adjustment: LedgerAdjustment) -> PostgresQuery {
    """
    INSERT INTO ledger (user_id, asset, amount, kind, environment, adjustment_id)
    VALUES (\(adjustment.userId), \(adjustment.asset), \(adjustment.amount),
            \(LedgerKind.adjustment), \(adjustment.environment), \(adjustment.id))
    """
  }
}
