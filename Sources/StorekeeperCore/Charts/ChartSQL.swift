import Postgres

/// The SQL of every chart, over the views of `Migrations/repeatable/charts.sql`. Each chart is
/// one statement: the request's parameters (`w`), its periods (`b`), then the chart's own
/// common table expressions ending in `o` (period, starts_at, ends_at, seg, currency, and the
/// measures as a jsonb `m`), which `rows` turns into the answer's JSON array. Money stays
/// `numeric` and leaves as decimal text.
enum ChartSQL {
  /// The request as one row, and the instants its days begin and end at in its zone. `now_at`
  /// is now, or with `rollup` the instant the rollup is exact up to; `limit_at` is the range's
  /// end or `now_at`, whichever is earlier: states are sampled no later than that.
  static func parameters(_ query: ChartQuery, rollup: Bool = false) -> PostgresQuery {
    let now =
      rollup
      ? "(SELECT as_of FROM chart_rollup_state)" : "now()"
    let generation = rollup ? "(SELECT generation FROM chart_rollup_state)" : "0::bigint"
    return """
      WITH r AS (
        SELECT \(query.timeZone)::text AS tz, \(query.resolution.rawValue)::text AS res,
               \(query.from)::date AS from_day, \(query.to)::date AS to_day,
               \(query.store)::text AS f_store, \(query.product)::text AS f_product,
               \(query.country)::text AS f_country, \(query.environment)::text AS f_env,
               \(query.currency)::text AS cur,
               \(unescaped: now) AS now_at, \(unescaped: generation) AS generation),
      w AS MATERIALIZED (
        SELECT r.*, ('1 ' || r.res)::interval AS step,
               r.from_day::timestamp AT TIME ZONE r.tz AS from_at,
               (r.to_day + 1)::timestamp AT TIME ZONE r.tz AS to_at,
               least((r.to_day + 1)::timestamp AT TIME ZONE r.tz, r.now_at) AS limit_at
        FROM r),
      b AS (
        SELECT g AS k, to_char(greatest(g, w.from_day::timestamp), 'YYYY-MM-DD') AS period,
               \(unescaped: periodStart("g")) AS starts_at, \(unescaped: periodEnd("g")) AS ends_at
        FROM w, generate_series(date_trunc(w.res, w.from_day::timestamp), w.to_day::timestamp, w.step) g
        WHERE \(unescaped: periodStart("g")) < w.now_at)
      """
  }

  /// When the period of key `k` (its local start, `b.k`) begins and ends: the range's own
  /// first and last days cut the first and last periods.
  static func periodStart(_ k: String) -> String {
    "greatest(\(k), w.from_day::timestamp) AT TIME ZONE w.tz"
  }

  static func periodEnd(_ k: String) -> String {
    "least(\(k) + w.step, (w.to_day + 1)::timestamp) AT TIME ZONE w.tz"
  }

  /// Whether every period of `query` begins and ends at a whole UTC hour, so that the hourly
  /// rollup answers it exactly (every zone with whole-hour offsets in the range).
  static func hourAligned(_ query: ChartQuery) -> PostgresQuery {
    var sql = parameters(query)
    sql.append(
      """

      SELECT coalesce(bool_and(date_trunc('hour', b.starts_at, 'UTC') = b.starts_at
                               AND date_trunc('hour', b.ends_at, 'UTC') = b.ends_at), true)
             AS aligned
      FROM b
      """)
    return sql
  }

  /// The filters, over a row aliased `x` of either view.
  static let filter = """
    (w.f_store IS NULL OR x.store = w.f_store)
    AND (w.f_product IS NULL OR x.product_id = w.f_product)
    AND (w.f_country IS NULL OR x.country = w.f_country)
    AND (w.f_env IS NULL OR x.environment = w.f_env)
    """

  /// The period an instant falls in: its local bucket's start, as `b.k` holds it.
  static func bucket(_ column: String) -> String {
    "date_trunc(w.res, \(column) AT TIME ZONE w.tz)"
  }

  /// Decimal text without trailing zeros (NULL stays NULL).
  static func money(_ expression: String) -> String { "trim_scale(\(expression))::text" }

  /// A ratio rounded to four places, NULL when nothing was counted.
  static func ratio(_ part: String, _ whole: String) -> String {
    "trim_scale(round((\(part))::numeric / nullif(\(whole), 0), 4))::text"
  }

  /// The statement answering `query`: one row, `rows`, the JSON array of the chart's rows;
  /// from the rollup with `rollup` (only for `rolledUp` charts over hour-aligned periods), and
  /// from the counts of `payers` and `cohorts` when they are kept in the query's zone
  /// (`countsZone`, the rollup state's).
  static func chart(_ query: ChartQuery, rollup: Bool = false, countsZone: String = "UTC")
    -> PostgresQuery
  {
    var sql = parameters(query, rollup: rollup)
    let seg = query.segment.column
    let dims = query.timeZone == countsZone ? payerDims(query) : nil
    var text =
      if rollup, query.name == .payers, let dims {
        payerCountsBody(seg, dims: dims)
      } else if rollup, query.name == .cohorts, query.currency == nil, let dims {
        cohortCountsBody(seg, dims: dims)
      } else {
        rollup ? rollupBody(query.name, segment: seg) : body(query.name, segment: seg)
      }
    if query.currency != nil { text = converted(text) }
    sql.append(PostgresQuery(unsafeSQL: ",\n" + text))
    sql.append(
      PostgresQuery(
        unsafeSQL: """

          , n AS (SELECT count(*) AS n FROM o)
          SELECT coalesce(json_agg(jsonb_build_object(
                   'period', o.period,
                   'start', \(SQLTime.text("o.starts_at")),
                   'end', \(SQLTime.text("o.ends_at")),
                   'segment', o.seg, 'currency', o.currency) || o.m
                 ORDER BY o.starts_at, o.seg, o.currency, (o.m ->> 'month')::int), '[]')::text AS rows,
                 (SELECT n FROM n) AS count,
                 (SELECT \(SQLTime.text("w.now_at")) FROM w) AS as_of,
                 (SELECT floor(extract(epoch FROM now() - w.now_at))::bigint FROM w) AS lag,
                 \(query.currency == nil ? "NULL::text" : unconverted) AS unconverted
          FROM o
          -- An answer over the cap is counted, never built.
          WHERE (SELECT n FROM n) <= \(ChartQuery.maxRows)
          """))
    return sql
  }

  /// The chart's own expressions after `w` and `b`, ending in `o`.
  static func body(_ name: ChartName, segment seg: String) -> String {
    switch name {
    case .revenue: revenue(seg)
    case .newCustomers: newCustomers(seg)
    case .payers: payers(seg)
    case .refundRate: refundRate(seg)
    case .activeSubscriptions: stock(seg, trials: false, money: false, annual: false)
    case .activeTrials: stock(seg, trials: true, money: false, annual: false)
    case .mrr: stock(seg, trials: false, money: true, annual: false)
    case .arr: stock(seg, trials: false, money: true, annual: true)
    case .trialConversion: trialConversion(seg)
    case .cohorts: cohorts(seg)
    case .churn: churn(seg)
    case .reactivations: reactivations(seg)
    case .billingRetry: billing(seg, grace: false)
    case .gracePeriod: billing(seg, grace: true)
    case .consumptionRequests: consumptionRequests(seg)
    }
  }

  /// The transactions the filters keep, with their segment.
  static func kept(_ seg: String) -> String {
    """
    f AS (SELECT x.*, \(seg) AS seg FROM chart_transactions x, w WHERE \(filter))
    """
  }

  /// Rows for every period and every key (segment, currency) that has any event in the range.
  /// Keys are joined as `coalesce(…, '') = coalesce(…, '')` rather than IS NOT DISTINCT FROM,
  /// which PostgreSQL can only join in a nested loop; no segment or currency is ever ''.
  static func filled(_ measures: String) -> String {
    """
    keys AS (SELECT DISTINCT seg, currency FROM agg),
    o AS (
      SELECT b.period, b.starts_at, b.ends_at, keys.seg, keys.currency, \(measures) AS m
      FROM b CROSS JOIN keys
      LEFT JOIN agg ON agg.k = b.k AND coalesce(agg.seg, '') = coalesce(keys.seg, '')
                   AND coalesce(agg.currency, '') = coalesce(keys.currency, ''))
    """
  }

  static let revenueMeasures = """
      jsonb_build_object(
        'transactions', coalesce(agg.bought, 0), 'refunds', coalesce(agg.refunds, 0),
        'gross', CASE WHEN keys.currency IS NOT NULL THEN \(money("coalesce(agg.gross, 0)")) END,
        'refunded', CASE WHEN keys.currency IS NOT NULL THEN \(money("coalesce(agg.refunded, 0)")) END,
        'net', CASE WHEN keys.currency IS NOT NULL
                    THEN \(money("coalesce(agg.gross, 0) - coalesce(agg.refunded, 0)")) END)
    """

  static let refundRateMeasures = """
      jsonb_build_object(
        'transactions', coalesce(agg.bought, 0), 'refunded', coalesce(agg.refunded, 0),
        'amount', \(money("coalesce(agg.amount, 0)")),
        'refunded_amount', \(money("coalesce(agg.refunded_amount, 0)")),
        'rate_by_count', \(ratio("agg.refunded", "agg.bought")),
        'rate_by_amount', \(ratio("agg.refunded_amount", "agg.amount")))
    """

  static func revenue(_ seg: String) -> String {
    """
    \(kept(seg)),
    ev AS (
      SELECT \(bucket("f.purchase_date")) AS k, f.seg, f.currency, f.price AS gross,
             0::numeric AS refunded, 1 AS bought, 0 AS refunds
      FROM f, w WHERE f.purchase_date >= w.from_at AND f.purchase_date < w.to_at
      UNION ALL
      -- A full refund after prorated ones refunds the rest: their shares stay in their period.
      SELECT \(bucket("f.refunded_at")), f.seg, f.currency, 0,
             f.price - coalesce(f.partly_refunded, 0), 0, 1
      FROM f, w WHERE f.refunded_at >= w.from_at AND f.refunded_at < w.to_at
      UNION ALL
      -- A prorated refund is money refunded, not a refund of the purchase (`refunds`).
      SELECT \(bucket("f.partly_refunded_at")), f.seg, f.currency, 0, f.partly_refunded, 0, 0
      FROM f, w WHERE f.partly_refunded_at >= w.from_at AND f.partly_refunded_at < w.to_at),
    agg AS (
      SELECT k, seg, currency, sum(gross) AS gross, sum(refunded) AS refunded,
             sum(bought) AS bought, sum(refunds) AS refunds
      FROM ev GROUP BY 1, 2, 3),
    \(filled(revenueMeasures))
    """
  }

  /// Each user's first transaction in the asked environment, whatever else is filtered: a
  /// customer is new once, at their first purchase.
  static let firsts = """
    firsts AS (
      SELECT DISTINCT ON (c.user_id) c.*
      FROM chart_transactions c, w
      WHERE c.user_id IS NOT NULL AND (w.f_env IS NULL OR c.environment = w.f_env)
      ORDER BY c.user_id, c.purchase_date, c.transaction_id)
    """

  static func newCustomers(_ seg: String) -> String {
    """
    \(firsts),
    f AS (
      SELECT x.*, \(seg) AS seg FROM firsts x, w
      WHERE \(filter) AND x.purchase_date >= w.from_at AND x.purchase_date < w.to_at),
    agg AS (
      SELECT \(bucket("f.purchase_date")) AS k, f.seg, NULL::text AS currency,
             count(*) AS customers, count(*) FILTER (WHERE f.is_trial) AS trials
      FROM f, w GROUP BY 1, 2),
    \(filled(newCustomersMeasures))
    """
  }

  static let newCustomersMeasures = """
      jsonb_build_object('new_customers', coalesce(agg.customers, 0),
                         'started_with_trial', coalesce(agg.trials, 0))
    """

  static func payers(_ seg: String) -> String {
    """
    \(kept(seg)),
    agg AS (
      SELECT \(bucket("f.purchase_date")) AS k, f.seg, f.currency,
             count(DISTINCT f.user_id) AS payers, sum(f.price) AS revenue
      FROM f, w
      WHERE f.purchase_date >= w.from_at AND f.purchase_date < w.to_at AND f.price > 0
        AND f.user_id IS NOT NULL
      GROUP BY 1, 2, 3),
    \(filled(payersMeasures))
    """
  }

  static let payersMeasures = """
      jsonb_build_object(
        'payers', coalesce(agg.payers, 0),
        'revenue', \(money("coalesce(agg.revenue, 0)")),
        'arppu', \(money("round(agg.revenue / nullif(agg.payers, 0), 2)")))
    """

  static func refundRate(_ seg: String) -> String {
    """
    \(kept(seg)),
    agg AS (
      SELECT \(bucket("f.purchase_date")) AS k, f.seg, f.currency,
             count(*) AS bought, count(*) FILTER (WHERE f.refunded_at IS NOT NULL) AS refunded,
             sum(f.price) AS amount,
             coalesce(sum(CASE WHEN f.refunded_at IS NOT NULL THEN f.price ELSE f.partly_refunded END), 0)
               AS refunded_amount
      FROM f, w
      WHERE f.purchase_date >= w.from_at AND f.purchase_date < w.to_at AND f.price > 0
      GROUP BY 1, 2, 3),
    \(filled(refundRateMeasures))
    """
  }

  /// A state at each period's close: a period `[starts_at, ends_at)` counts at the close `c`
  /// of a period when it covers the instant just before `c` (starts_at < c <= ends_at), so
  /// each period adds one at its start and takes one away at its end, and the value at a close
  /// is the sum of everything that happened before it. The last period closes at `now_at`.
  static func stock(_ seg: String, trials: Bool, money asMoney: Bool, annual: Bool) -> String {
    let currency = asMoney ? "x.currency" : "NULL::text"
    return """
      p AS (
        SELECT x.starts_at, x.ends_at, \(seg) AS seg, \(currency) AS currency,
               coalesce(x.monthly_price, 0) AS v
        FROM chart_subscription_periods x, w
        WHERE \(filter) AND \(trials ? "" : "NOT ")x.is_trial
          AND x.starts_at < w.limit_at AND x.ends_at > x.starts_at\(asMoney ? " AND x.price IS NOT NULL" : "")),
      ev AS (
        SELECT p.starts_at AS at, p.seg, p.currency, 1 AS d, p.v FROM p
        UNION ALL
        SELECT p.ends_at, p.seg, p.currency, -1, -p.v FROM p, w WHERE p.ends_at < w.limit_at),
      init AS (
        SELECT ev.seg, ev.currency, sum(ev.d) AS d, sum(ev.v) AS v
        FROM ev, w WHERE ev.at < w.from_at GROUP BY 1, 2),
      agg AS (
        SELECT \(bucket("ev.at")) AS k, ev.seg, ev.currency, sum(ev.d) AS d, sum(ev.v) AS v
        FROM ev, w WHERE ev.at >= w.from_at GROUP BY 1, 2, 3),
      keys AS (SELECT seg, currency FROM init UNION SELECT seg, currency FROM agg),
      \(running(trials: trials, money: asMoney, annual: annual))
      """
  }

  /// The value at each period's close from `init` (before the range) and `agg` (per period),
  /// for every key of `keys`.
  static func running(trials: Bool, money asMoney: Bool, annual: Bool) -> String {
    let factor = annual ? " * 12" : ""
    let measures =
      asMoney
      ? """
      jsonb_build_object('subscriptions', o0.n,
                         '\(annual ? "arr" : "mrr")', \(money("round(o0.v\(factor), 2)")))
      """
      : "jsonb_build_object('\(trials ? "active_trials" : "active_subscriptions")', o0.n)"
    return """
      o0 AS (
        SELECT b.period, b.starts_at, b.ends_at, keys.seg, keys.currency,
               coalesce(init.d, 0) + sum(coalesce(agg.d, 0)) OVER running AS n,
               coalesce(init.v, 0) + sum(coalesce(agg.v, 0)) OVER running AS v
        FROM b CROSS JOIN keys
        LEFT JOIN init ON coalesce(init.seg, '') = coalesce(keys.seg, '')
                      AND coalesce(init.currency, '') = coalesce(keys.currency, '')
        LEFT JOIN agg ON agg.k = b.k AND coalesce(agg.seg, '') = coalesce(keys.seg, '')
                     AND coalesce(agg.currency, '') = coalesce(keys.currency, '')
        WINDOW running AS (PARTITION BY keys.seg, keys.currency ORDER BY b.k)),
      o AS (SELECT o0.period, o0.starts_at, o0.ends_at, o0.seg, o0.currency, \(measures) AS m FROM o0)
      """
  }

  /// Whether a trial period `t` was followed by a paid transaction of its subscription.
  static let converted = """
    EXISTS (SELECT 1 FROM chart_transactions c
            WHERE c.store = t.store AND c.original_transaction_id = t.original_transaction_id
              AND c.purchase_date >= t.starts_at AND NOT c.is_trial AND c.price > 0)
    """

  static func trialConversion(_ seg: String) -> String {
    """
    t AS (
      SELECT x.*, \(seg) AS seg FROM chart_subscription_periods x, w
      WHERE \(filter) AND x.is_trial AND x.starts_at >= w.from_at AND x.starts_at < w.to_at),
    tc AS (SELECT t.*, \(converted) AS converted FROM t),
    agg AS (
      SELECT \(bucket("tc.starts_at")) AS k, tc.seg, NULL::text AS currency,
             count(*) AS trials, count(*) FILTER (WHERE tc.converted) AS converted,
             count(*) FILTER (WHERE NOT tc.converted AND tc.ends_at > now()) AS pending
      FROM tc, w GROUP BY 1, 2),
    \(filled(trialConversionMeasures))
    """
  }

  static let trialConversionMeasures = """
      jsonb_build_object(
        'trials', coalesce(agg.trials, 0), 'converted', coalesce(agg.converted, 0),
        'pending', coalesce(agg.pending, 0),
        'conversion_rate', \(ratio("agg.converted", "agg.trials")))
    """

  /// Customers by the month of their first transaction, and for each month since: how many of
  /// them paid in it, and what the cohort has paid so far net of refunds, per currency.
  static func cohorts(_ seg: String) -> String {
    """
    \(firsts),
    cohort AS (
      SELECT x.user_id, date_trunc('month', x.purchase_date AT TIME ZONE w.tz) AS cm, \(seg) AS seg
      FROM firsts x, w
      WHERE \(filter) AND x.purchase_date >= w.from_at AND x.purchase_date < w.to_at),
    pay AS (
      SELECT cohort.cm, cohort.seg, c.user_id, c.currency,
             c.price - coalesce(c.partly_refunded, 0) AS price, c.refunded_at IS NOT NULL AS refunded,
             date_trunc('month', c.purchase_date AT TIME ZONE w.tz) AS pm
      FROM chart_transactions c JOIN cohort ON cohort.user_id = c.user_id, w
      WHERE (w.f_env IS NULL OR c.environment = w.f_env) AND c.price > 0
        AND c.purchase_date < w.limit_at),
    \(cohortTail)
    """
  }

  /// The cohorts from `cohort` (user_id, cm, seg) and `pay` (cm, seg, user_id, currency,
  /// price less what prorated refunds refunded, refunded, pm), whichever source they were
  /// read from.
  static let cohortTail = """
    sizes AS (SELECT cm, seg, count(*) AS n FROM cohort GROUP BY 1, 2),
    paying AS (SELECT cm, seg, pm, count(DISTINCT user_id) AS n FROM pay GROUP BY 1, 2, 3),
    -- What each cohort paid per month and currency, refunded transactions left out: summed
    -- once, so the cumulative sums below read a few rows per cohort, not every payment.
    -- MATERIALIZED so that it stays summed once whatever the plan of the join below: inlined
    -- into the LATERAL subquery `cum` once was, it aggregated every payment again for each
    -- cohort month (45 s instead of 1 in bench/charts).
    monthly AS MATERIALIZED (
      SELECT cm, seg, pm, currency, sum(price) AS amount FROM pay
      WHERE NOT refunded GROUP BY 1, 2, 3, 4),
    \(cohortCurves)
    """

  /// Each cohort's months from `sizes` (cm, seg, n), `paying` (cm, seg, pm, n) and `monthly`
  /// (cm, seg, pm, currency, amount), one row per cohort and payment month in each.
  static let cohortCurves = """
    months AS (
      SELECT s.cm, s.seg, s.n, gs.i,
             s.cm + make_interval(months => gs.i) AS mk
      FROM sizes s, w,
           -- Up to the month of the range's last instant: `limit_at` is the first instant after
           -- it, the 1st of the next month when the range ends on a month's last day.
           generate_series(0, ((extract(year FROM (w.limit_at - interval '1 microsecond') AT TIME ZONE w.tz)
                                - extract(year FROM s.cm)) * 12
                               + extract(month FROM (w.limit_at - interval '1 microsecond') AT TIME ZONE w.tz)
                               - extract(month FROM s.cm))::int) gs(i)),
    -- A join, not a LATERAL subquery per month: that scanned the whole of `monthly` once for
    -- each of a cohort chart's months (324 × 4.5 ms at two million transactions).
    cum AS (
      SELECT q.cm, q.seg, q.i,
             jsonb_object_agg(q.currency, \(money("q.amount")) ORDER BY q.currency) AS amounts
      FROM (SELECT m.cm, m.seg, m.i, monthly.currency, sum(monthly.amount) AS amount
            FROM months m
            JOIN monthly ON monthly.cm = m.cm AND coalesce(monthly.seg, '') = coalesce(m.seg, '')
              AND monthly.pm <= m.mk
            GROUP BY 1, 2, 3, 4) q
      GROUP BY 1, 2, 3),
    o AS (
      SELECT to_char(m.cm, 'YYYY-MM-DD') AS period, m.cm AT TIME ZONE w.tz AS starts_at,
             (m.cm + interval '1 month') AT TIME ZONE w.tz AS ends_at, m.seg, NULL::text AS currency,
             jsonb_build_object(
               'month', m.i, 'cohort_size', m.n, 'paying', coalesce(paying.n, 0),
               'retention', \(ratio("coalesce(paying.n, 0)", "m.n")),
               'cumulative_revenue', coalesce(cum.amounts, '{}'::jsonb)) AS m
      FROM months m CROSS JOIN w
      LEFT JOIN paying ON paying.cm = m.cm AND coalesce(paying.seg, '') = coalesce(m.seg, '') AND paying.pm = m.mk
      LEFT JOIN cum ON cum.cm = m.cm AND coalesce(cum.seg, '') = coalesce(m.seg, '') AND cum.i = m.i)
    """
}
