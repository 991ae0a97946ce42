import Postgres

/// What the ledger knows about the purchase a consumption request is about: whose it is,
/// whether they consented, whether it was delivered, and how much of what it credited was
/// spent.
struct ConsumptionFacts: Sendable, Equatable {
  var userId: String?
  var consented: Bool
  /// Its order was paid: what it grants was credited or granted.
  var delivered: Bool
  var productType: ProductType?
  /// What the purchase credited, and how much of that spends have used (its lots, FIFO).
  var credited: Int64
  var spent: Int64

  static func load(transactionId: String, on executor: any PostgresExecutor) async throws
    -> ConsumptionFacts
  {
    guard
      let row = try await executor.queryFirst(
        """
        SELECT t.user_id, coalesce(c.consented, false) AS consented,
               coalesce(o.paid_at IS NOT NULL, false) AS delivered, p.type AS product_type,
               (SELECT coalesce(sum(g.amount), 0)::bigint FROM ledger g
                WHERE g.trade_no = t.trade_no AND g.kind = 'grant') AS credited,
               (SELECT coalesce(sum(u.amount), 0)::bigint
                FROM ledger_lots l JOIN ledger_lot_uses u ON u.lot_id = l.id
                JOIN ledger d ON d.id = u.ledger_id
                WHERE l.trade_no = t.trade_no AND d.kind = 'spend') AS spent
        FROM apple_transactions t
        LEFT JOIN orders o ON o.trade_no = t.trade_no
        LEFT JOIN products p ON p.product_id = t.product_id
        LEFT JOIN consumption_consents c ON c.user_id = t.user_id
        WHERE t.transaction_id = \(transactionId)
        """)
    else {
      return ConsumptionFacts(
        userId: nil, consented: false, delivered: false, productType: nil, credited: 0, spent: 0)
    }
    return ConsumptionFacts(
      userId: try row.decodeIfPresent("user_id"), consented: try row.decode("consented"),
      delivered: try row.decode("delivered"),
      productType: try row.decodeIfPresent("product_type"), credited: try row.decode("credited"),
      spent: try row.decode("spent"))
  }

  /// The share spent in Apple's milliunits: nil when the purchase credited no balance (what
  /// it grants is not measured) or is a subscription (Apple computes that itself).
  var milliunits: Int32? {
    if productType == .autoRenewable { return nil }
    guard delivered else { return 0 }
    guard credited > 0 else { return nil }
    return Int32(min(100_000, max(0, spent * 100_000 / credited)))
  }
}
