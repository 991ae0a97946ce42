import Postgres

/// `payers` from the counts of Migrations/0092 (`chart_payer_counts`): distinct users per
/// day, ISO week or month of the counted zone (`countsZone`, Migrations/0119), per grouping
/// of the dimensions (`dims`), kept by the rollup's passes. Whole periods are read from the counts, periods a range or now cuts from
/// `chart_payments`, as every zone's are; counts are distinct users, so nothing is summed
/// across periods or keys.
extension ChartSQL {
  /// The groupings kept, over payments aliased `p`; `dims` is their bitmask (store 8,
  /// environment 4, product 2, country 1), as `grouping()` gives it inverted.
  static let payerGroupings = """
    (), (p.store), (p.product_id), (p.country), (p.environment), (p.environment, p.store),
    (p.environment, p.product_id), (p.environment, p.country)
    """
  static let payerResolutions = "(VALUES ('day'), ('week'), ('month')) r(resolution)"

  /// The zone the counts are kept in, as a pass's statements read it: the rollup state's, which
  /// a rebuild sets before it counts.
  static let countsZone = "(SELECT s.counts_zone FROM chart_rollup_state s)"

  /// Whether the last pass kept the counts in the asked zone `w.tz` (see Migrations/0119).
  static let countsKept =
    "(SELECT s.horizon = s.counts_horizon AND s.counts_zone = w.tz FROM chart_rollup_state s)"

  /// The grouping that answers `query` from the counts, or nil when none does: two of store,
  /// product and country filtered or segmented at once. (The zone is the caller's to check.)
  static func payerDims(_ query: ChartQuery) -> Int? {
    var dims = 0
    if query.store != nil || query.segment == .store { dims |= 8 }
    if query.environment != nil || query.segment == .environment { dims |= 4 }
    if query.product != nil || query.segment == .product { dims |= 2 }
    if query.country != nil || query.segment == .country { dims |= 1 }
    return [0, 8, 2, 1].contains(dims & ~4) ? dims : nil
  }

  /// Adds `sign` × each grouping's distinct users and revenue over `rows` (a FROM item of
  /// chart_payments' columns with `resolution` and `period`) to chart_payer_counts.
  static func addPayerCounts(from rows: String, sign: String) -> PostgresQuery {
    PostgresQuery(
      unsafeSQL: """
        INSERT INTO chart_payer_counts (resolution, period, dims, store, environment, product_id,
          country, currency, payers, revenue)
        SELECT p.resolution, p.period,
               (15 - grouping(p.store, p.environment, p.product_id, p.country))::smallint,
               p.store, p.environment, p.product_id, p.country, p.currency,
               \(sign)count(DISTINCT p.user_id), \(sign)sum(p.price)
        FROM \(rows) p
        GROUP BY p.resolution, p.period, p.currency, GROUPING SETS (\(payerGroupings))
        ON CONFLICT (resolution, dims, period, store, environment, product_id, country, currency)
        DO UPDATE SET payers = chart_payer_counts.payers + EXCLUDED.payers,
                      revenue = chart_payer_counts.revenue + EXCLUDED.revenue
        """)
  }

  /// A rebuild's counts: every payment in each resolution.
  static let countAllPayers = addPayerCounts(
    from: """
      (SELECT r.resolution, date_trunc(r.resolution, c.purchased_at AT TIME ZONE \(countsZone)) AS period,
              c.user_id, c.store, c.environment, c.product_id, c.country, c.currency, c.price
       FROM chart_payments c, \(payerResolutions))
      """, sign: "")

  /// What the users and periods in `chart_dirty_payers` count now, signed: taken out before a
  /// pass replaces the changed units' payments, put back after.
  static func countDirtyPayers(sign: String) -> PostgresQuery {
    addPayerCounts(
      from: """
        (SELECT d.resolution, d.period, c.user_id, c.store, c.environment, c.product_id,
                c.country, c.currency, c.price
         FROM chart_dirty_payers d JOIN chart_payments c ON c.user_id = d.user_id
           AND c.purchased_at >= d.period AT TIME ZONE \(countsZone)
           AND c.purchased_at < (d.period + ('1 ' || d.resolution)::interval) AT TIME ZONE \(countsZone))
        """, sign: sign)
  }

  /// The users and periods whose counts a pass changes: those of the changed units' payments
  /// that are not the same before the pass (`chart_payments`) and after it
  /// (`chart_new_payments`). A refund changes no payer count, nor does a renewal change the
  /// periods of the subscription's earlier payments, so neither makes their periods counted
  /// again.
  static let dirtyPayers: PostgresQuery = {
    let columns =
      "transaction_id, user_id, purchased_at, store, environment, product_id, country, currency, price"
    let old = "SELECT \(columns) FROM chart_payments WHERE \(ofChangedUnits("chart_payments"))"
    let new = "SELECT \(columns) FROM chart_new_payments"
    return PostgresQuery(
      unsafeSQL: """
        INSERT INTO chart_dirty_payers (user_id, resolution, period)
        SELECT DISTINCT c.user_id, r.resolution,
               date_trunc(r.resolution, c.purchased_at AT TIME ZONE \(countsZone))
        FROM ((\(old) EXCEPT \(new)) UNION ALL (\(new) EXCEPT \(old))) c, \(payerResolutions)
        """)
  }()

  /// `payers` from the counts for the grouping `dims` (`payerDims`), in the counted zone. A period is
  /// read from the counts when it is whole (not cut by the range) and over by the rollup's
  /// `as_of`, and the last pass kept the counts (see Migrations/0092); the others, from the
  /// payments.
  static func payerCountsBody(_ seg: String, dims: Int) -> String {
    let whole = """
      b.starts_at = b.k AT TIME ZONE w.tz AND b.ends_at = (b.k + w.step) AT TIME ZONE w.tz
        AND b.ends_at <= w.now_at
        AND \(countsKept)
      """
    return """
      cut AS (SELECT b.* FROM b, w WHERE NOT coalesce(\(whole), false)),
      -- Per cut period, its own range of the payments' time index (none when none is cut).
      -- OFFSET 0 keeps the subquery a subquery: flattened into a join, PostgreSQL scanned
      -- every payment to join them with no cut period (4.7 s instead of 0.12 in bench/charts).
      f AS (
        SELECT x.*
        FROM cut, w, LATERAL (
          SELECT x.*, \(seg) AS seg FROM chart_payments x
          WHERE \(filter) AND x.purchased_at >= cut.starts_at
            AND x.purchased_at < least(cut.ends_at, w.limit_at)
          OFFSET 0) x),
      agg AS (
        SELECT \(bucket("f.purchased_at")) AS k, f.seg, f.currency,
               count(DISTINCT f.user_id) AS payers, sum(f.price) AS revenue
        FROM f, w GROUP BY 1, 2, 3
        UNION ALL
        SELECT x.period, \(seg), x.currency, x.payers, x.revenue
        FROM chart_payer_counts x JOIN b ON x.period = b.k, w
        WHERE x.resolution = w.res AND x.dims = \(dims) AND \(whole) AND \(filter)),
      \(filled(payersMeasures))
      """
  }
}
