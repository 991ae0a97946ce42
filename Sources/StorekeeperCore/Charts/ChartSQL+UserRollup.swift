/// The charts that count distinct users or follow each user, from the per-user rollups of
/// Migrations/0080 instead of the transactions: `chart_customers` (each user's first
/// transaction), `chart_payments` (each paid transaction with an owner) and `chart_trials`
/// (each trial period). Their rows hold exact instants, so every zone's days and months cut
/// them as the transactions' would; each answer is as of the rollup's `as_of`.
extension ChartSQL {
  static let rolledUpByUser: Set<ChartName> = [
    .newCustomers, .payers, .cohorts, .trialConversion,
  ]

  /// The first transactions of the asked environment's customers (`scope` '*' for all).
  static let customers = """
    chart_customers x, w
    WHERE x.scope = coalesce(w.f_env, '*') AND \(filter) AND x.first_at >= w.from_at
      AND x.first_at < w.to_at AND x.first_at < w.now_at
    """

  /// The chart's expressions after `w` and `b` from the per-user rollups, ending in `o`.
  static func userRollupBody(_ name: ChartName, segment seg: String) -> String {
    switch name {
    case .newCustomers:
      """
      f AS (SELECT x.*, \(seg) AS seg FROM \(customers)),
      agg AS (
        SELECT \(bucket("f.first_at")) AS k, f.seg, NULL::text AS currency,
               count(*) AS customers, count(*) FILTER (WHERE f.is_trial) AS trials
        FROM f, w GROUP BY 1, 2),
      \(filled(newCustomersMeasures))
      """
    case .payers:
      """
      f AS (
        SELECT x.*, \(seg) AS seg FROM chart_payments x, w
        WHERE \(filter) AND x.purchased_at >= w.from_at AND x.purchased_at < w.limit_at),
      agg AS (
        SELECT \(bucket("f.purchased_at")) AS k, f.seg, f.currency,
               count(DISTINCT f.user_id) AS payers, sum(f.price) AS revenue
        FROM f, w GROUP BY 1, 2, 3),
      \(filled(payersMeasures))
      """
    case .trialConversion:
      // Pending as of the rollup: the trial still ran at `as_of`.
      """
      tc AS (
        SELECT x.*, \(seg) AS seg FROM chart_trials x, w
        WHERE \(filter) AND x.starts_at >= w.from_at AND x.starts_at < w.to_at
          AND x.starts_at < w.now_at),
      agg AS (
        SELECT \(bucket("tc.starts_at")) AS k, tc.seg, NULL::text AS currency,
               count(*) AS trials, count(*) FILTER (WHERE tc.converted) AS converted,
               count(*) FILTER (WHERE NOT tc.converted AND tc.ends_at > w.now_at) AS pending
        FROM tc, w GROUP BY 1, 2),
      \(filled(trialConversionMeasures))
      """
    case .cohorts:
      """
      cohort AS (
        SELECT x.user_id, date_trunc('month', x.first_at AT TIME ZONE w.tz) AS cm, \(seg) AS seg
        FROM \(customers)),
      pay AS (
        SELECT cohort.cm, cohort.seg, c.user_id, c.currency, c.price - c.partly_refunded AS price,
               c.refunded,
               date_trunc('month', c.purchased_at AT TIME ZONE w.tz) AS pm
        FROM chart_payments c JOIN cohort ON cohort.user_id = c.user_id, w
        WHERE (w.f_env IS NULL OR c.environment = w.f_env) AND c.purchased_at < w.limit_at),
      \(cohortTail)
      """
    default: body(name, segment: seg)
    }
  }
}
