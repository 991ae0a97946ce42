import Postgres

/// The rollup's SQL: the rebuild of `chart_hourly`, and the charts that sum it instead of the
/// transactions. Each rollup chart keeps the raw chart's keys and measures exactly, for every
/// range whose periods begin at whole UTC hours (`ChartRepository` checks), as of the rollup's
/// `as_of` instead of now.
extension ChartSQL {
  /// The charts a rollup answers; the others count distinct users or follow one user's
  /// history and always read the transactions.
  static let rolledUp: Set<ChartName> = [
    .revenue, .refundRate, .activeSubscriptions, .activeTrials, .mrr, .arr,
  ]

  /// One generation of `chart_hourly`: every event before the hour the build began in, summed
  /// by UTC hour and key. `now()` is the build transaction's start, so `as_of` is the same
  /// instant the state records.
  static func rebuild(generation: Int64) -> PostgresQuery {
    """
    WITH s AS (SELECT date_trunc('hour', now()) AS as_of),
    e AS (
      SELECT date_trunc('hour', x.purchase_date) AS hour, x.store, x.environment, x.product_id,
             x.country, x.currency, 1 AS bought, coalesce(x.price, 0) AS gross, 0 AS refunds,
             0 AS refunded,
             CASE WHEN x.price > 0 THEN 1 ELSE 0 END AS paid,
             CASE WHEN x.price > 0 THEN x.price ELSE 0 END AS paid_amount,
             CASE WHEN x.price > 0 AND x.refunded_at < s.as_of THEN 1 ELSE 0 END AS paid_refunded,
             CASE WHEN x.price > 0 AND x.refunded_at < s.as_of THEN x.price ELSE 0 END
               AS paid_refunded_amount,
             0 AS ss, 0 AS ts, 0 AS sd, 0 AS td, 0 AS md
      FROM chart_transactions x, s WHERE x.purchase_date < s.as_of
      UNION ALL
      SELECT date_trunc('hour', x.refunded_at), x.store, x.environment, x.product_id, x.country,
             x.currency, 0, 0, 1, coalesce(x.price, 0), 0, 0, 0, 0, 0, 0, 0, 0, 0
      FROM chart_transactions x, s WHERE x.refunded_at < s.as_of
      UNION ALL
      SELECT date_trunc('hour', p.starts_at), p.store, p.environment, p.product_id, p.country,
             p.currency, 0, 0, 0, 0, 0, 0, 0, 0,
             CASE WHEN p.is_trial THEN 0 ELSE 1 END, CASE WHEN p.is_trial THEN 1 ELSE 0 END,
             CASE WHEN p.is_trial THEN 0 ELSE 1 END, CASE WHEN p.is_trial THEN 1 ELSE 0 END,
             coalesce(p.monthly_price, 0)
      FROM chart_subscription_periods p, s WHERE p.starts_at < s.as_of AND p.ends_at > p.starts_at
      UNION ALL
      SELECT date_trunc('hour', p.ends_at), p.store, p.environment, p.product_id, p.country,
             p.currency, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
             CASE WHEN p.is_trial THEN 0 ELSE -1 END, CASE WHEN p.is_trial THEN -1 ELSE 0 END,
             -coalesce(p.monthly_price, 0)
      FROM chart_subscription_periods p, s WHERE p.ends_at < s.as_of AND p.ends_at > p.starts_at)
    INSERT INTO chart_hourly (generation, hour, store, environment, product_id, country, currency,
      bought, gross, refunds, refunded, paid, paid_amount, paid_refunded, paid_refunded_amount,
      subscription_starts, trial_starts, subscription_delta, trial_delta, mrr_delta)
    SELECT \(generation), hour, store, environment, product_id, country, currency, sum(bought),
           sum(gross), sum(refunds), sum(refunded), sum(paid), sum(paid_amount), sum(paid_refunded),
           sum(paid_refunded_amount), sum(ss), sum(ts), sum(sd), sum(td), sum(md)
    FROM e GROUP BY hour, store, environment, product_id, country, currency
    """
  }

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
        HAVING sum(f.bought) > 0 OR sum(f.refunds) > 0),
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
    default: body(name, segment: seg)
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
