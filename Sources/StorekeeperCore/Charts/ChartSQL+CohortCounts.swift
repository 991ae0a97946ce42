import Postgres

/// `cohorts` from the counts of Migrations/0099 (`chart_cohort_sizes`, `chart_cohort_counts`),
/// kept in the counted zone (Migrations/0119): per scope, cohort month, payment month and grouping of the
/// first transaction (the groupings of `payerGroupings`), kept by the rollup's passes. Whole
/// cohort months and whole payment months are read from the counts; the cohorts a range or
/// `as_of` cuts, and the payment month `as_of` or `to` cuts, from the per-user rollups, as
/// every zone's are.
extension ChartSQL {
  /// The cohort users a pass counts again: the users whose first transaction may have moved
  /// (`chart_dirty_users`) and the owners of the changed units' payments before the pass
  /// (after it, their owners are among `chart_dirty_users`).
  static let dirtyCohortUsers = PostgresQuery(
    unsafeSQL: """
      INSERT INTO chart_dirty_cohort_users (user_id)
      SELECT user_id FROM chart_dirty_users
      UNION
      SELECT user_id FROM chart_payments WHERE \(ofChangedUnits("chart_payments"))
      """)

  /// Adds `sign` × what the customers `users` selects (a condition over chart_customers `cu`)
  /// count in the cohort tables. Each user is in one cohort per scope, and distinct payers
  /// are taken per user before they are summed, so the counts of disjoint users add up.
  static func addCohortCounts(users: String, sign: String) -> PostgresQuery {
    let groupings = payerGroupings.replacingOccurrences(of: "p.", with: "u.")
    let dims = "(15 - grouping(u.store, u.environment, u.product_id, u.country))::smallint"
    let keys = "store, environment, product_id, country"
    return PostgresQuery(
      unsafeSQL: """
        WITH c AS (
          SELECT cu.user_id, cu.scope, date_trunc('month', cu.first_at AT TIME ZONE \(countsZone)) AS cm,
                 cu.store, cu.environment, cu.product_id, cu.country
          FROM chart_customers cu WHERE \(users)),
        sizes AS (
          INSERT INTO chart_cohort_sizes (scope, cohort_month, dims, \(keys), customers)
          SELECT u.scope, u.cm, \(dims), u.store, u.environment, u.product_id, u.country,
                 \(sign)count(*)
          FROM c u GROUP BY u.scope, u.cm, GROUPING SETS (\(groupings))
          ON CONFLICT (scope, dims, cohort_month, \(keys))
          DO UPDATE SET customers = chart_cohort_sizes.customers + EXCLUDED.customers),
        p AS (
          SELECT c.*, date_trunc('month', x.purchased_at AT TIME ZONE \(countsZone)) AS pm, x.currency,
                 x.price - x.partly_refunded AS price, x.refunded
          FROM c JOIN chart_payments x ON x.user_id = c.user_id
            AND (c.scope = '*' OR x.environment = c.scope)),
        per AS (
          SELECT scope, cm, pm, \(keys), NULL::text AS currency, 1 AS payers,
                 count(*) AS payments, 0::numeric AS revenue
          FROM p GROUP BY scope, user_id, cm, pm, \(keys)
          UNION ALL
          SELECT scope, cm, pm, \(keys), currency, 0, 1, price FROM p WHERE NOT refunded)
        INSERT INTO chart_cohort_counts (scope, cohort_month, month, dims, \(keys), currency,
          payers, payments, revenue)
        SELECT u.scope, u.cm, u.pm, \(dims), u.store, u.environment, u.product_id, u.country,
               u.currency, \(sign)sum(u.payers), \(sign)sum(u.payments), \(sign)sum(u.revenue)
        FROM per u GROUP BY u.scope, u.cm, u.pm, u.currency, GROUPING SETS (\(groupings))
        ON CONFLICT (scope, dims, cohort_month, month, \(keys), currency)
        DO UPDATE SET payers = chart_cohort_counts.payers + EXCLUDED.payers,
                      payments = chart_cohort_counts.payments + EXCLUDED.payments,
                      revenue = chart_cohort_counts.revenue + EXCLUDED.revenue
        """)
  }

  static let countAllCohorts = addCohortCounts(users: "true", sign: "")

  static func countDirtyCohorts(sign: String) -> PostgresQuery {
    addCohortCounts(
      users: "cu.user_id = ANY(ARRAY(SELECT user_id FROM chart_dirty_cohort_users))", sign: sign)
  }

  /// Cohorts from the counts for the grouping `dims` (`payerDims`), in the counted zone. `cw` holds the
  /// whole months `[wf, wt)`: cohort months inside the range and over by `limit_at`, while the
  /// last pass kept the counts (else none). Their payment months before `wt` are counted
  /// ahead; the cut cohorts, and every cohort's payments from `wt` on, are read as in
  /// `userRollupBody`. The parts are disjoint cells (cohort, month), so nothing is summed twice.
  static func cohortCountsBody(_ seg: String, dims: Int) -> String {
    let scope = "x.scope = coalesce(w.f_env, '*')"
    let counted = """
      \(scope) AND x.dims = \(dims) AND \(filter)
        AND x.cohort_month >= cw.wf AND x.cohort_month < cw.wt
      """
    let member = """
      \(scope) AND \(filter) AND x.first_at >= w.from_at AND x.first_at < w.to_at
        AND x.first_at < w.now_at
      """
    return """
      cw AS MATERIALIZED (
        SELECT m.wf, CASE WHEN m.kept AND m.wt > m.wf THEN m.wt ELSE m.wf END AS wt
        FROM (SELECT date_trunc('month', w.from_day::timestamp - interval '1 day')
                       + interval '1 month' AS wf,
                     date_trunc('month', w.limit_at AT TIME ZONE w.tz) AS wt,
                     coalesce(\(countsKept), false) AS kept
              FROM w) m),
      cohort AS (
        SELECT x.user_id, date_trunc('month', x.first_at AT TIME ZONE w.tz) AS cm, \(seg) AS seg
        FROM chart_customers x, w, cw WHERE \(member) AND x.first_at < cw.wf AT TIME ZONE w.tz
        UNION ALL
        SELECT x.user_id, date_trunc('month', x.first_at AT TIME ZONE w.tz), \(seg)
        FROM chart_customers x, w, cw WHERE \(member) AND x.first_at >= cw.wt AT TIME ZONE w.tz),
      -- The payments from `wt` on, found by their time before their payers: the counted
      -- cohorts hold most customers, and joining every one of them to their payments to keep
      -- a month's took 1.4 s under EXPLAIN ANALYZE (the chart answered in 1.35 s) at two
      -- million transactions, when that month had none.
      later AS MATERIALIZED (
        SELECT c.* FROM w, cw, chart_payments c
        WHERE c.purchased_at >= cw.wt AT TIME ZONE w.tz AND c.purchased_at < w.limit_at
          AND (w.f_env IS NULL OR c.environment = w.f_env)),
      pay AS (
        SELECT cohort.cm, cohort.seg, c.user_id, c.currency, c.price - c.partly_refunded AS price,
               c.refunded, date_trunc('month', c.purchased_at AT TIME ZONE w.tz) AS pm
        FROM chart_payments c JOIN cohort ON cohort.user_id = c.user_id, w
        WHERE (w.f_env IS NULL OR c.environment = w.f_env) AND c.purchased_at < w.limit_at
        UNION ALL
        SELECT date_trunc('month', x.first_at AT TIME ZONE w.tz), \(seg), c.user_id, c.currency,
               c.price - c.partly_refunded, c.refunded, date_trunc('month', c.purchased_at AT TIME ZONE w.tz)
        FROM w, cw, later c JOIN chart_customers x ON x.user_id = c.user_id
        WHERE \(scope) AND \(filter)
          AND x.first_at >= cw.wf AT TIME ZONE w.tz AND x.first_at < cw.wt AT TIME ZONE w.tz),
      sizes AS (
        SELECT cm, seg, count(*) AS n FROM cohort GROUP BY 1, 2
        UNION ALL
        SELECT x.cohort_month, \(seg), x.customers FROM chart_cohort_sizes x, w, cw
        WHERE \(counted)),
      paying AS (
        SELECT cm, seg, pm, count(DISTINCT user_id) AS n FROM pay GROUP BY 1, 2, 3
        UNION ALL
        SELECT x.cohort_month, \(seg), x.month, x.payers FROM chart_cohort_counts x, w, cw
        WHERE \(counted) AND x.currency IS NULL AND x.month < cw.wt),
      -- MATERIALIZED as in `cohortTail`.
      monthly AS MATERIALIZED (
        SELECT cm, seg, pm, currency, sum(price) AS amount FROM pay
        WHERE NOT refunded GROUP BY 1, 2, 3, 4
        UNION ALL
        SELECT x.cohort_month, \(seg), x.month, x.currency, x.revenue
        FROM chart_cohort_counts x, w, cw
        WHERE \(counted) AND x.currency IS NOT NULL AND x.month < cw.wt),
      \(cohortCurves)
      """
  }
}
