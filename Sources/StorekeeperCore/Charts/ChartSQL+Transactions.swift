import Postgres

/// The transactions behind one point of a chart: the rows its number was computed from, with
/// the same parameters, filters and period rules as the chart itself (`ChartSQL`).
extension ChartSQL {
  static let columns = """
    x.transaction_id, x.original_transaction_id, x.store, x.user_id, x.product_id, x.environment,
    x.country, x.currency, trim_scale(x.price)::text AS price, x.is_trial, x.trade_no,
    \(SQLTime.rfc3339("x.purchase_date", as: "purchase_date")),
    \(SQLTime.rfc3339("x.expires_date", as: "expires_date")),
    \(SQLTime.rfc3339("x.refunded_at", as: "refunded_at"))
    """

  /// Up to `limit + 1` rows after `after` (a transaction id) behind the period that holds the
  /// day `period`, as `ChartPointTransaction` rows.
  static func transactions(_ query: ChartQuery, period: String, after: String?, limit: Int)
    -> PostgresQuery
  {
    var sql = parameters(query)
    sql.append(
      """
      ,
      pt AS MATERIALIZED (
        SELECT b.*, least(b.ends_at, now()) AS close_at FROM b, w
        WHERE b.k = date_trunc(w.res, \(period)::date::timestamp)),
      """)
    let seg = query.segment.column
    if let text = metricTransactions(query.name, segment: seg) {
      sql.append(PostgresQuery(unsafeSQL: text))
      if let after { sql.append(" AND x.transaction_id > \(after)") }
      sql.append(" ORDER BY x.transaction_id LIMIT \(limit + 1)")
      return sql
    }
    let source: String
    let condition: String
    var extra = "NULL::text AS event"
    switch query.name {
    case .revenue:
      source = "chart_transactions"
      condition = """
        ((x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at)
         OR (x.refunded_at >= pt.starts_at AND x.refunded_at < pt.ends_at))
        """
      extra = """
        CASE WHEN NOT (x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at)
               THEN 'refund'
             WHEN x.refunded_at >= pt.starts_at AND x.refunded_at < pt.ends_at
               THEN 'purchase_and_refund'
             ELSE 'purchase' END AS event
        """
    case .payers:
      source = "chart_transactions"
      condition = """
        x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at AND x.price > 0
        AND x.user_id IS NOT NULL
        """
      extra = "'purchase' AS event"
    case .refundRate:
      source = "chart_transactions"
      condition = "x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at AND x.price > 0"
      extra = "CASE WHEN x.refunded_at IS NULL THEN 'purchase' ELSE 'refunded' END AS event"
    case .newCustomers, .cohorts:
      source = "firsts"
      condition = "x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at"
      extra = "'first_purchase' AS event"
    case .activeSubscriptions, .activeTrials, .mrr, .arr:
      source = "chart_subscription_periods"
      let trials = query.name == .activeTrials ? "" : "NOT "
      let priced = query.name == .mrr || query.name == .arr ? " AND x.price IS NOT NULL" : ""
      condition = """
        \(trials)x.is_trial AND x.starts_at < pt.close_at AND x.ends_at >= pt.close_at
        AND x.ends_at > x.starts_at\(priced)
        """
      extra = "'active' AS event"
    case .churn, .reactivations, .billingRetry, .gracePeriod, .consumptionRequests:
      return sql  // answered by `metricTransactions` above
    case .trialConversion:
      source = "chart_subscription_periods"
      condition = "x.is_trial AND x.starts_at >= pt.starts_at AND x.starts_at < pt.ends_at"
      extra = """
        CASE WHEN \(converted.replacingOccurrences(of: "t.", with: "x."))
             THEN 'trial_converted' ELSE 'trial' END AS event
        """
    }
    let stock = query.name.isStock || query.name == .trialConversion
    // The periods view names its purchase `starts_at` and has no refund or trade number.
    let shape =
      stock
      ? """
      x.transaction_id, x.original_transaction_id, x.store, x.user_id, x.product_id,
      x.environment, x.country, x.currency, trim_scale(x.price)::text AS price, x.is_trial,
      t.trade_no, \(SQLTime.rfc3339("x.starts_at", as: "purchase_date")),
      \(SQLTime.rfc3339("t.expires_date", as: "expires_date")),
      \(SQLTime.rfc3339("t.refunded_at", as: "refunded_at"))
      """ : columns
    let join =
      stock
      ? " JOIN chart_transactions t ON t.store = x.store AND t.transaction_id = x.transaction_id"
      : ""
    var text = source == "firsts" ? firsts + "\n" : "q0 AS (SELECT 1)\n"
    text += """
      SELECT \(shape), \(seg) AS segment, \(extra)
      FROM \(source) x\(join), w, pt
      WHERE \(filter) AND \(condition)
      """
    if query.currency != nil { text = converted(text) }
    sql.append(PostgresQuery(unsafeSQL: text))
    if let after { sql.append(" AND x.transaction_id > \(after)") }
    sql.append(" ORDER BY x.transaction_id LIMIT \(limit + 1)")
    return sql
  }
}
