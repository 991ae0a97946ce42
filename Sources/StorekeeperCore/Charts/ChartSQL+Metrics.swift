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

  /// The keys of the chart's periods from the one before the one `from` falls in to the one
  /// `to` falls in: every period a row spanning `from`-`to` can touch (a billing spell), each
  /// then judged by the exact condition on its start and end computed from its key as `b`
  /// computes them. The one before, because a local midnight that happens twice (a clock set
  /// back at 01:00) is the later instant: the hour before it is local day D but still period
  /// D-1.
  /// Comparing each row with every period instead was a nested loop (periods × rows), and a
  /// join of the keys with `b` was planned as a sort of every pair.
  static func periodKeys(_ from: String, _ to: String) -> String {
    """
    generate_series(greatest(\(bucket(from)) - w.step, date_trunc(w.res, w.from_day::timestamp)),
                    least(\(bucket(to)), w.to_day::timestamp), w.step)
    """
  }

  /// A paid subscription period is active at a period's start when it starts before it and
  /// ends at or after it; it churned there when its run ends before that period's end (or
  /// now). The periods it is active at the start of are consecutive, from `k1` to `k2`, and it
  /// can churn only in `k2` (its run outlasts it). So each paid period adds one at `k1`, takes
  /// it back after `k2`, and counts a churn in `k2`: a running sum over the chart's periods
  /// gives the actives, three rows per paid period. Expanding each paid period into every chart
  /// period it covers was millions of rows to sort (10-24 s for 190,000 periods over two years
  /// by day, against about 3 s now).
  static let churnedAtStart = """
    pk AS (
      -- The period the paid period starts in and the one it ends in (or now falls in), by local
      -- time; `ps` checks them against the periods' instants (see `periodKeys`).
      SELECT x.seg, x.starts_at, x.ends_at, x.span_end,
             greatest(\(bucket("x.starts_at")), date_trunc(w.res, w.from_day::timestamp)) AS ka,
             least(x.ends_at, w.now_at - interval '1 microsecond') AS last_at,
             least(\(bucket("least(x.ends_at, w.now_at - interval '1 microsecond')")),
                   date_trunc(w.res, w.to_day::timestamp)) AS kb
      FROM w, runs x
      WHERE \(filter)),
    ps AS (
      -- k1: the first period starting after the paid period starts; k2: the last one starting
      -- at or before it ends (and before now).
      SELECT pk.seg, pk.ends_at, pk.span_end,
             CASE WHEN \(periodStart("pk.ka")) > pk.starts_at THEN pk.ka
                  ELSE pk.ka + w.step END AS k1,
             CASE WHEN \(periodStart("pk.kb")) <= pk.last_at THEN pk.kb
                  ELSE pk.kb - w.step END AS k2
      FROM pk, w),
    live AS (
      SELECT ps.seg, ps.k1, ps.k2,
             ps.span_end < least(\(periodEnd("ps.k2")), w.now_at) AS churned
      FROM ps, w
      WHERE ps.k1 <= ps.k2 AND \(periodStart("ps.k1")) <= ps.ends_at
        AND \(periodStart("ps.k1")) < w.now_at),
    ev AS (
      SELECT k1 AS k, seg, 1 AS d, 0 AS c FROM live
      UNION ALL
      SELECT live.k2 + w.step, live.seg, -1, 0 FROM live, w
      UNION ALL
      SELECT k2, seg, 0, 1 FROM live WHERE churned),
    evs AS (SELECT k, seg, sum(d) AS d, sum(c) AS c FROM ev GROUP BY 1, 2),
    segs AS (SELECT DISTINCT seg FROM live),
    cs AS (
      SELECT b.k, s.seg, sum(coalesce(e.d, 0)) OVER (PARTITION BY s.seg ORDER BY b.k) AS active,
             coalesce(e.c, 0) AS churned
      FROM b CROSS JOIN segs s
      LEFT JOIN evs e ON e.k = b.k AND coalesce(e.seg, '') = coalesce(s.seg, ''))
    """

  static func churn(_ seg: String) -> String {
    """
    \(paidRuns(seg)),
    \(churnedAtStart),
    agg AS (
      SELECT k, seg, NULL::text AS currency, active, churned FROM cs WHERE active > 0),
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
        SELECT g.k, sp.seg, 1 AS inside, 0 AS entered, 0 AS recovered
        FROM w, sp
        CROSS JOIN LATERAL \(periodKeys("sp.starts_at", "sp.ends_at")) AS g(k)
        WHERE \(periodStart("g.k")) < w.now_at
          AND sp.starts_at < least(\(periodEnd("g.k")), w.now_at)
          AND sp.ends_at >= least(\(periodEnd("g.k")), w.now_at)
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
        SELECT \(columns), \(seg) AS segment, x.answer AS event,
               x.notification_uuid::text AS notification
        FROM chart_consumption_requests x, w, pt
        WHERE \(filter) AND x.requested_at >= pt.starts_at AND x.requested_at < pt.ends_at
        """
    default:
      return nil
    }
  }
}
