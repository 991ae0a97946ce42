import Postgres

/// `ledger`: append-only credits and debits; a balance is the sum of a user's rows.
enum Ledger {
  /// A statement, run beside an order transition, that credits (or, for a refund, debits) the
  /// changed order's user with what `product` grants per unit, times the order's quantity.
  /// Nil when the product credits no balance.
  static func effect(of product: Product, kind: LedgerKind, transactionId: String?)
    throws -> PostgresQuery?
  {
    guard product.type == .consumable, let balance = product.grants.balance, !balance.isEmpty
    else { return nil }
    let grants = try JSONCoding.text(balance)
    return """
      INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id)
      SELECT changed.user_id, g.key, g.value::bigint * changed.quantity * \(kind.sign), \(kind),
             changed.trade_no, \(transactionId)
      FROM changed, jsonb_each_text(\(grants)::jsonb) AS g
      """
  }
}
