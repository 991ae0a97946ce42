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
  /// day `period`, as `ChartPointTransaction` rows. For cohorts, `month` (0 is the cohort's
  /// own) lists that month's payments by the cohort's members instead of its members' first
  /// transactions.
  /// `pointCurrency`: only transactions in the point's currency (a row is per currency; the
  /// reporting one when money is converted), so a point's list is its own.
  static func transactions(
    _ query: ChartQuery, period: String, month: Int? = nil, pointCurrency: String? = nil,
    after: String?, limit: Int
  ) -> PostgresQuery {
    var sql = parameters(query)
    let inCurrency: PostgresQuery =
      pointCurrency.map { " AND x.currency = \($0)::text" } ?? ""
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
      sql.append(inCurrency)
      guard query.name == .consumptionRequests else {
        if let after { sql.append(" AND x.transaction_id > \(after)") }
        sql.append(" ORDER BY x.transaction_id LIMIT \(limit + 1)")
        return sql
      }
      // Apple may ask twice about one transaction: its requests are told apart by their
      // notification, so a page boundary between them skips neither (`pageKey`).
      if let after {
        let (transactionId, notification) = consumptionCursor(after)
        sql.append(
          " AND (x.transaction_id, x.notification_uuid::text) > (\(transactionId), \(notification))"
        )
      }
      sql.append(" ORDER BY x.transaction_id, x.notification_uuid::text LIMIT \(limit + 1)")
      return sql
    }
    if query.name == .cohorts, let month {
      var text = cohortPayments(segment: seg, month: month)
      if query.currency != nil { text = converted(text) }
      sql.append(PostgresQuery(unsafeSQL: text))
      sql.append(inCurrency)
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
         OR (x.refunded_at >= pt.starts_at AND x.refunded_at < pt.ends_at)
         OR (x.partly_refunded_at >= pt.starts_at AND x.partly_refunded_at < pt.ends_at))
        """
      // A full refund names the event when both came in the period (it refunds the rest).
      extra = """
        CASE WHEN x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at THEN
               CASE WHEN x.refunded_at >= pt.starts_at AND x.refunded_at < pt.ends_at
                      THEN 'purchase_and_refund'
                    WHEN x.partly_refunded_at >= pt.starts_at AND x.partly_refunded_at < pt.ends_at
                      THEN 'purchase_and_partial_refund'
                    ELSE 'purchase' END
             WHEN x.refunded_at >= pt.starts_at AND x.refunded_at < pt.ends_at THEN 'refund'
             ELSE 'partial_refund' END AS event
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
      extra = """
        CASE WHEN x.refunded_at IS NOT NULL THEN 'refunded'
             WHEN x.partly_refunded IS NOT NULL THEN 'partly_refunded' ELSE 'purchase' END AS event
        """
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
    sql.append(inCurrency)
    if let after { sql.append(" AND x.transaction_id > \(after)") }
    sql.append(" ORDER BY x.transaction_id LIMIT \(limit + 1)")
    return sql
  }

  /// A consumption request's cursor (`ChartPointTransaction.pageKey`): its transaction and
  /// notification; a transaction id alone (a cursor of the release before) reads from its first.
  static func consumptionCursor(_ cursor: String) -> (transactionId: String, notification: String) {
    guard let slash = cursor.lastIndex(of: "/") else { return (cursor, "") }
    return (String(cursor[..<slash]), String(cursor[cursor.index(after: slash)...]))
  }

  /// The payments of month `month` after the cohort's: what `paying` counts (priced above 0,
  /// refunded or not) and, unless refunded, `cumulative_revenue` adds. The cohort and its
  /// segment are picked by the first transaction, as the chart picks them.
  private static func cohortPayments(segment seg: String, month: Int) -> String {
    """
    \(firsts),
    members AS (
      SELECT x.user_id, \(seg) AS segment FROM firsts x, w, pt
      WHERE \(filter) AND x.purchase_date >= pt.starts_at AND x.purchase_date < pt.ends_at)
    SELECT \(columns), m.segment,
           CASE WHEN x.refunded_at IS NULL THEN 'payment' ELSE 'refunded_payment' END AS event
    FROM chart_transactions x JOIN members m ON m.user_id = x.user_id, w, pt
    WHERE (w.f_env IS NULL OR x.environment = w.f_env) AND x.price > 0
      AND x.purchase_date < w.limit_at
      AND x.purchase_date >= (pt.k + make_interval(months => \(month))) AT TIME ZONE w.tz
      AND x.purchase_date < (pt.k + make_interval(months => \(month + 1))) AT TIME ZONE w.tz
    """
  }
}
