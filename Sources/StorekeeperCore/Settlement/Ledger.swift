import Postgres

/// `ledger`: append-only credits and debits; a balance is the sum of a user's rows. Each
/// statement here runs beside an order transition and reads the changed order as `changed`.
enum Ledger {
  /// Credits what `product` grants per unit, times the order's quantity. Nil when the product
  /// credits no balance.
  static func grant(_ product: Product, transactionId: String, environment: String) throws
    -> PostgresQuery?
  {
    guard product.type == .consumable, let balance = product.grants.balance, !balance.isEmpty
    else { return nil }
    let grants = JSONValue.object(balance.mapValues { .number(String($0)) }).parameterText
    return """
      INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment)
      SELECT changed.user_id, g.key, g.value::bigint * changed.quantity, \(LedgerKind.grant),
             changed.trade_no, \(transactionId), \(environment)
      FROM changed, jsonb_each_text(\(grants)::jsonb) AS g
      """
  }

  /// Takes back what the order's rows hold now (a refund, a transfer away), or, for a refund's
  /// reversal, gives back what its grants gave. Computed from the order's own rows, so what
  /// comes back is what went out even if the product's grants were edited since, and a sandbox
  /// purchase that credited nothing debits nothing.
  static func reverse(_ kind: LedgerKind, transactionId: String) -> PostgresQuery {
    let target: PostgresQuery =
      kind == .refundReversed
      ? "coalesce(sum(l.amount) FILTER (WHERE l.kind = \(LedgerKind.grant)), 0)" : "0"
    // A transfer takes what the purchase holds: its rows less what a partial refund left owed
    // (that debt stays the old owner's, and `move` credits the new owner no more than this).
    let held: PostgresQuery = kind == .transferred ? heldLessDebt : "sum(l.amount)"
    // A transfer takes the purchase as a whole, as `move` gives it (one row, in the purchase's
    // own environment): per environment, a debt repaid by a sandbox credit made a sandbox group
    // the outstanding debt was subtracted from twice, and its reversal a credit that paid the
    // old owner's debt off. A refund's reversal gives back per environment what each took.
    let environment: PostgresQuery =
      kind == .transferred ? Self.purchaseEnvironment : "l.environment"
    let groups: PostgresQuery =
      kind == .transferred
      ? "l.user_id, l.asset, l.trade_no" : "l.user_id, l.asset, l.trade_no, l.environment"
    return """
      INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment)
      SELECT l.user_id, l.asset, \(target) - \(held), \(kind), l.trade_no, \(transactionId),
             \(environment)
      FROM ledger l JOIN changed ON l.trade_no = changed.trade_no
      GROUP BY \(groups)
      HAVING \(target) - \(held) <> 0
      """
  }

  /// The environment of an order's rows taken together: its grants', else any of its rows'.
  private static let purchaseEnvironment: PostgresQuery = """
    coalesce(min(l.environment) FILTER (WHERE l.kind = \(LedgerKind.grant)), min(l.environment))
    """

  /// What an order's rows (`l`, grouped by user, asset and order) hold for their owner: their
  /// sum, less what refunds of it could not take back and is still owed (`ledger_debts`). A
  /// repayment of that debt is a row of the order too, so this does not change as it is repaid.
  private static let heldLessDebt: PostgresQuery = """
    (sum(l.amount) - coalesce((SELECT sum(d.outstanding) FROM ledger_debts d
                               WHERE d.trade_no = l.trade_no AND d.asset = l.asset
                                 AND d.user_id = l.user_id), 0))
    """

  /// A transfer's credit to the new owner's order `tradeNo`: what `reverse(.transferred)` takes
  /// from the old owner, in all, per asset, read from the old order's own rows
  /// (`changed`) beside that reversal. The purchase moves what it holds: not the product's
  /// grants as the catalog has them now, nor the units a refund already took back (whether
  /// taken from the balance or left owed), and a sandbox purchase that credited nothing moves
  /// nothing.
  ///
  /// Per asset over all the order's rows, whatever their environment: a repayment of the
  /// order's debt is a row of the environment that paid it (a sandbox credit repaying a
  /// production refund's debt), and left out it made the production rows alone look unrepaid
  /// (a refunded unit moved again). The credit is in the purchase's own environment.
  static func move(to userId: String, tradeNo: String, transactionId: String) -> PostgresQuery {
    """
    INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment)
    SELECT \(userId), l.asset, \(heldLessDebt)::bigint, \(LedgerKind.grant), \(tradeNo),
           \(transactionId), \(purchaseEnvironment)
    FROM ledger l JOIN changed ON l.trade_no = changed.trade_no
    GROUP BY l.user_id, l.asset, l.trade_no
    HAVING \(heldLessDebt) > 0
    """
  }
}

extension Ledger {
  /// A refund's rows: per asset and environment, what `storekeeper_refund_plan` says the
  /// purchase still holds. Under `.debt` only what is left of its lot is taken and the rest is
  /// recorded as the row's `debt` (the ledger's trigger opens it in `ledger_debts`); under
  /// `.negative` all of it is taken, whatever the balance becomes.
  static func refund(transactionId: String, policy: RefundPolicy) -> PostgresQuery {
    """
    INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment, debt)
    SELECT p.user_id, p.asset,
           -(CASE WHEN \(policy)::text = 'debt' THEN p.recovered ELSE p.owed END),
           \(LedgerKind.refund), changed.trade_no, \(transactionId), p.environment,
           CASE WHEN \(policy)::text = 'debt' THEN p.owed - p.recovered ELSE 0 END
    FROM changed, storekeeper_refund_plan(changed.trade_no) AS p
    """
  }

  /// Cancels what a refund of `tradeNo` left as debt (`ledger_debts`), when Apple reverses it.
  static func cancelDebts(tradeNo: String, on executor: any PostgresExecutor) async throws {
    try await executor.execute(
      """
      UPDATE ledger_debts SET outstanding = 0, cancelled = true
      WHERE trade_no = \(tradeNo) AND outstanding > 0
      """)
  }
}
