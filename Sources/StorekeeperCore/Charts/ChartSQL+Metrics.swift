import Postgres

/// The charts of subscription movement (`churn`, `reactivations`), billing trouble
/// (`billing_retry`, `grace_period`) and consumption requests (docs/CHARTS.md), each ending in
/// `o` like the others, and the transactions behind their points. They always read the
/// transactions and the stores' notifications: the rollup holds none of them.
extension ChartSQL {
  /// Paid subscription periods in the asked environment, each with `span_end`: when the
  /// unbroken run of its subscription's paid periods it belongs to ends (a renewal or an
  /// upgrade starting at or before a period's end continues the run). The other filters apply
  /// to the period that was active, not to the run, so a move to another product is no churn.
  static func paidRuns(_ seg: String) -> String {
    """
    r0 AS (
      SELECT x.*, \(seg) AS seg FROM chart_subscription_periods x, w
      WHERE (w.f_env IS NULL OR x.environment = w.f_env) AND NOT x.is_trial
        AND x.ends_at > x.starts_at),
    r1 AS (
      SELECT r0.*,
             CASE WHEN r0.starts_at <= max(r0.ends_at) OVER (
                    PARTITION BY r0.store, r0.original_transaction_id
                    ORDER BY r0.starts_at, r0.transaction_id
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) THEN 0 ELSE 1 END AS fresh
      FROM r0),
    r2 AS (
      SELECT r1.*, sum(r1.fresh) OVER (
               PARTITION BY r1.store, r1.original_transaction_id
               ORDER BY r1.starts_at, r1.transaction_id) AS run
      FROM r1),
    runs AS (
      SELECT r2.*, max(r2.ends_at) OVER (
               PARTITION BY r2.store, r2.original_transaction_id, r2.run) AS span_end
      FROM r2)
    """
  }

  /// Each paid subscription active at a period's start (its period covers the instant just
  /// before it), and whether it churned in the period: its run ended before the period's end
  /// (or now).
  static let churnedAtStart = """
    cs AS (
      SELECT b.k, x.*, x.span_end < least(b.ends_at, w.now_at) AS churned
      FROM b, w, runs x
      WHERE \(filter) AND x.starts_at < b.starts_at AND x.ends_at >= b.starts_at)
    """

  static func churn(_ seg: String) -> String {
    """
    \(paidRuns(seg)),
    \(churnedAtStart),
    agg AS (
      SELECT k, seg, NULL::text AS currency, count(*) AS active,
             count(*) FILTER (WHERE churned) AS churned
      FROM cs GROUP BY 1, 2),
    \(filled("""
      jsonb_build_object(
        'active_at_start', coalesce(agg.active, 0), 'churned', coalesce(agg.churned, 0),
        'churn_rate', \(ratio("agg.churned", "agg.active")))
      """))
    """
  }

  /// Paid periods that begin after every earlier paid period of the same user (any store,
  /// product or subscription, in the asked environment) had ended: a lapsed subscriber back.
  static func reactivated(_ seg: String) -> String {
    """
    u0 AS (
      SELECT x.*, \(seg) AS seg,
             max(x.ends_at) OVER (
               PARTITION BY x.user_id ORDER BY x.starts_at, x.store, x.transaction_id
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end
      FROM chart_subscription_periods x, w
      WHERE x.user_id IS NOT NULL AND (w.f_env IS NULL OR x.environment = w.f_env)
        AND NOT x.is_trial AND x.ends_at > x.starts_at),
    re AS (SELECT u0.* FROM u0 WHERE u0.before_end < u0.starts_at)
    """
  }

  static func reactivations(_ seg: String) -> String {
    """
    \(reactivated(seg)),
    agg AS (
      SELECT \(bucket("x.starts_at")) AS k, x.seg, NULL::text AS currency, count(*) AS n,
             count(DISTINCT x.user_id) AS users
      FROM re x, w
      WHERE \(filter) AND x.starts_at >= w.from_at AND x.starts_at < w.to_at
      GROUP BY 1, 2),
    \(filled("""
      jsonb_build_object('reactivations', coalesce(agg.n, 0),
                         'reactivated_customers', coalesce(agg.users, 0))
      """))
    """
  }

  /// The billing states a chart counts: billing retry includes a grace period (retrying too).
  static func billingStates(grace: Bool) -> String {
    grace ? "('grace_period')" : "('billing_retry', 'grace_period')"
  }

  /// Subscriptions in the state at each period's close (a spell covers the instant just before
  /// it), the spells that entered it in the period, and those that left it with a renewal.
  static func billing(_ seg: String, grace: Bool) -> String {
    let states = billingStates(grace: grace)
    let name = grace ? "in_grace_period" : "in_billing_retry"
    return """
      sp AS (SELECT x.*, \(seg) AS seg FROM chart_billing_spells x, w
             WHERE \(filter) AND x.billing_state IN \(states)),
      ev AS (
        SELECT b.k, sp.seg, 1 AS inside, 0 AS entered, 0 AS recovered
        FROM b, w, sp
        WHERE sp.starts_at < least(b.ends_at, w.now_at) AND sp.ends_at >= least(b.ends_at, w.now_at)
        UNION ALL
        SELECT \(bucket("sp.starts_at")), sp.seg, 0, 1, 0 FROM sp, w
        WHERE sp.prev_state NOT IN \(states) AND sp.starts_at >= w.from_at AND sp.starts_at < w.to_at
        UNION ALL
        SELECT \(bucket("sp.ends_at")), sp.seg, 0, 0, 1 FROM sp, w
        WHERE sp.recovered AND sp.ends_at >= w.from_at AND sp.ends_at < w.to_at),
      agg AS (
        SELECT k, seg, NULL::text AS currency, sum(inside) AS inside, sum(entered) AS entered,
               sum(recovered) AS recovered
        FROM ev GROUP BY 1, 2),
      \(filled("""
        jsonb_build_object('\(name)', coalesce(agg.inside, 0), 'entered', coalesce(agg.entered, 0),
                           'recovered', coalesce(agg.recovered, 0))
        """))
      """
  }

  static let consumptionAnswers = [
    "answered", "skipped_without_consent", "skipped", "failed", "expired", "pending",
  ]

  static func consumptionRequests(_ seg: String) -> String {
    let counts = consumptionAnswers.map { "count(*) FILTER (WHERE x.answer = '\($0)') AS \($0)" }
    let measures = consumptionAnswers.map { "'\($0)', coalesce(agg.\($0), 0)" }
    return """
      agg AS (
        SELECT \(bucket("x.requested_at")) AS k, \(seg) AS seg, NULL::text AS currency,
               count(*) AS requests, \(counts.joined(separator: ", "))
        FROM chart_consumption_requests x, w
        WHERE \(filter) AND x.requested_at >= w.from_at AND x.requested_at < w.to_at
        GROUP BY 1, 2),
      \(filled("jsonb_build_object('requests', coalesce(agg.requests, 0), \(measures.joined(separator: ", ")))"))
      """
  }

  /// The point's rows for these charts, after `pt` (the period asked for): the SELECT of
  /// `ChartSQL.transactions`, without its paging.
  static func metricTransactions(_ name: ChartName, segment seg: String) -> String? {
    let periodShape = """
      x.transaction_id, x.original_transaction_id, x.store, x.user_id, x.product_id,
      x.environment, x.country, x.currency, trim_scale(x.price)::text AS price, x.is_trial,
      t.trade_no, \(SQLTime.rfc3339("x.starts_at", as: "purchase_date")),
      \(SQLTime.rfc3339("t.expires_date", as: "expires_date")),
      \(SQLTime.rfc3339("t.refunded_at", as: "refunded_at")), \(seg) AS segment
      """
    let join =
      "JOIN chart_transactions t ON t.store = x.store AND t.transaction_id = x.transaction_id"
    switch name {
    case .churn:
      return """
        \(paidRuns(seg)),
        cs AS (
          SELECT x.*, x.span_end < least(pt.ends_at, w.now_at) AS churned
          FROM pt, w, runs x
          WHERE \(filter) AND x.starts_at < pt.starts_at AND x.ends_at >= pt.starts_at)
        SELECT \(periodShape), CASE WHEN x.churned THEN 'churned' ELSE 'active' END AS event
        FROM cs x \(join), w WHERE true
        """
    case .reactivations:
      return """
        \(reactivated(seg))
        SELECT \(periodShape), 'reactivation' AS event
        FROM re x \(join), w, pt
        WHERE \(filter) AND x.starts_at >= pt.starts_at AND x.starts_at < pt.ends_at
        """
    case .billingRetry, .gracePeriod:
      return """
        q0 AS (SELECT 1)
        SELECT \(columns), \(seg) AS segment, s.billing_state AS event
        FROM chart_billing_spells s JOIN chart_transactions x
          ON x.store = s.store AND x.transaction_id = s.transaction_id, w, pt
        WHERE \(filter) AND s.billing_state IN \(billingStates(grace: name == .gracePeriod))
          AND s.starts_at < pt.close_at AND s.ends_at >= pt.close_at
        """
    case .consumptionRequests:
      return """
        q0 AS (SELECT 1)
        SELECT \(columns), \(seg) AS segment, x.answer AS event
        FROM chart_consumption_requests x, w, pt
        WHERE \(filter) AND x.requested_at >= pt.starts_at AND x.requested_at < pt.ends_at
        """
    default:
      return nil
    }
  }
}
