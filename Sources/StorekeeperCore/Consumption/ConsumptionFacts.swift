import Postgres

/// What the ledger knows about the purchase a consumption request is about: whose it is,
/// whether they consented, whether it was delivered, and how much of what it credited was
/// used.
struct ConsumptionFacts: Sendable, Equatable {
  var userId: String?
  var consented: Bool
  /// Its order was paid: what it grants was credited or granted.
  var delivered: Bool
  var productType: ProductType?
  /// What the purchase credited of one asset, and how much of that is used
  /// (`storekeeper_purchase_use`): spent, or gone to what was owed before it came (a debt, a
  /// negative balance). Of a purchase crediting several assets, the asset most used: a share
  /// summed over assets would let a cheap asset spent in full hide behind a dear one untouched.
  var credited: Int64
  var used: Int64

  static func load(transactionId: String, on executor: any PostgresExecutor) async throws
    -> ConsumptionFacts
  {
    guard
      let row = try await executor.queryFirst(
        """
        SELECT t.user_id, coalesce(c.consented, false) AS consented,
               coalesce(o.paid_at IS NOT NULL, false) AS delivered, p.type AS product_type,
               coalesce(u.credited, 0)::bigint AS credited, coalesce(u.used, 0)::bigint AS used
        FROM apple_transactions t
        LEFT JOIN orders o ON o.trade_no = t.trade_no
        LEFT JOIN products p ON p.product_id = t.product_id
        LEFT JOIN consumption_consents c ON c.user_id = t.user_id
        LEFT JOIN LATERAL (
          SELECT x.credited, x.used FROM storekeeper_purchase_use(t.trade_no) x
          ORDER BY x.used::numeric / x.credited DESC, x.credited DESC LIMIT 1) u ON true
        WHERE t.transaction_id = \(transactionId)
        """)
    else {
      return ConsumptionFacts(
        userId: nil, consented: false, delivered: false, productType: nil, credited: 0, used: 0)
    }
    return ConsumptionFacts(
      userId: try row.decodeIfPresent("user_id"), consented: try row.decode("consented"),
      delivered: try row.decode("delivered"),
      productType: try row.decodeIfPresent("product_type"), credited: try row.decode("credited"),
      used: try row.decode("used"))
  }

  /// The share used in Apple's milliunits: nil when the purchase credited no balance (what
  /// it grants is not measured) or is a subscription (Apple computes that itself).
  var milliunits: Int32? {
    if productType == .autoRenewable { return nil }
    guard delivered else { return 0 }
    guard credited > 0 else { return nil }
    let (scaled, overflow) = max(0, used).multipliedReportingOverflow(by: 100_000)
    // Rounded up: a purchase of which anything was used is never said to be untouched; and
    // one not all used is never said to be all used (99,999 at most).
    let share =
      overflow
      ? Int64((Double(used) / Double(credited) * 100_000).rounded(.up))
      : (scaled + credited - 1) / credited
    let ceiling: Int64 = used >= credited ? 100_000 : 99_999
    return Int32(min(ceiling, max(0, share)))
  }
}
