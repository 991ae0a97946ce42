import Postgres

/// The charts that sum `chart_hourly` instead of the transactions. Each keeps the raw chart's
/// keys and measures exactly, for every range whose periods begin at whole UTC hours
/// (`ChartRepository` checks), as of the rollup's `as_of` instead of now.
extension ChartSQL {
  /// The charts the hourly rollup answers (over hour-aligned periods); `rolledUpByUser` lists
  /// those the per-user rollups answer in any zone. The others read the transactions.
  static let rolledUp: Set<ChartName> = [
    .revenue, .refundRate, .activeSubscriptions, .activeTrials, .mrr, .arr,
  ]

  /// The rollup's rows for the chart's range, with their segment.
  static func hourly(_ seg: String) -> String {
    """
    f AS (
      SELECT x.*, \(seg) AS seg FROM chart_hourly x, w
      WHERE x.generation = w.generation AND \(filter) AND x.hour < w.limit_at)
    """
  }

  /// The chart's expressions after `w` and `b` when the rollup answers, ending in `o`.
  static func rollupBody(_ name: ChartName, segment seg: String) -> String {
    switch name {
    case .revenue:
      """
      \(hourly(seg)),
      agg AS (
        SELECT \(bucket("f.hour")) AS k, f.seg, f.currency, sum(f.gross) AS gross,
               sum(f.refunded) AS refunded, sum(f.bought) AS bought, sum(f.refunds) AS refunds
        FROM f, w WHERE f.hour >= w.from_at GROUP BY 1, 2, 3
        HAVING sum(f.bought) > 0 OR sum(f.refunds) > 0 OR sum(f.refunded) <> 0),
      \(filled(revenueMeasures))
      """
    case .refundRate:
      """
      \(hourly(seg)),
      agg AS (
        SELECT \(bucket("f.hour")) AS k, f.seg, f.currency, sum(f.paid) AS bought,
               sum(f.paid_refunded) AS refunded, sum(f.paid_amount) AS amount,
               sum(f.paid_refunded_amount) AS refunded_amount
        FROM f, w WHERE f.hour >= w.from_at GROUP BY 1, 2, 3 HAVING sum(f.paid) > 0),
      \(filled(refundRateMeasures))
      """
    case .activeSubscriptions: rollupStock(seg, trials: false, money: false, annual: false)
    case .activeTrials: rollupStock(seg, trials: true, money: false, annual: false)
    case .mrr: rollupStock(seg, trials: false, money: true, annual: false)
    case .arr: rollupStock(seg, trials: false, money: true, annual: true)
    default: userRollupBody(name, segment: seg)
    }
  }

  static func rollupStock(_ seg: String, trials: Bool, money asMoney: Bool, annual: Bool) -> String
  {
    let starts = trials ? "x.trial_starts" : "x.subscription_starts"
    let delta = trials ? "x.trial_delta" : "x.subscription_delta"
    let value = trials ? "0::numeric" : "x.mrr_delta"
    return """
      ev AS (
        SELECT x.hour AS at, \(seg) AS seg, \(asMoney ? "x.currency" : "NULL::text") AS currency,
               \(starts) AS st, \(delta) AS d, \(value) AS v
        FROM chart_hourly x, w
        WHERE x.generation = w.generation AND \(filter) AND x.hour < w.limit_at
          AND (\(starts) <> 0 OR \(delta) <> 0)\(asMoney ? " AND x.currency IS NOT NULL" : "")),
      keys AS (SELECT seg, currency FROM ev GROUP BY 1, 2 HAVING sum(st) > 0),
      init AS (
        SELECT ev.seg, ev.currency, sum(ev.d) AS d, sum(ev.v) AS v
        FROM ev, w WHERE ev.at < w.from_at GROUP BY 1, 2),
      agg AS (
        SELECT \(bucket("ev.at")) AS k, ev.seg, ev.currency, sum(ev.d) AS d, sum(ev.v) AS v
        FROM ev, w WHERE ev.at >= w.from_at GROUP BY 1, 2, 3),
      \(running(trials: trials, money: asMoney, annual: annual))
      """
  }
}
