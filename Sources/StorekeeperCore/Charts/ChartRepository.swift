import Postgres

/// Charts computed from the stores' transactions (docs/CHARTS.md), on the read pool: a chart
/// is a report, and a replica's lag is shown by `/readyz`, not hidden here.
package struct ChartRepository: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  /// Whether PostgreSQL knows `name` as a time zone (its `pg_timezone_names`).
  package func knowsTimeZone(_ name: String) async throws -> Bool {
    try await database.queryFirst(
      "SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = \(name)) AS known"
    )?.decode("known") ?? false
  }

  /// Where a chart's rows came from: the transactions as they are now, or the rollup as of
  /// its `as_of` (`lagSeconds` behind now).
  package struct Source: Sendable, Equatable {
    package var rollup: Bool
    package var asOf: String?
    package var lagSeconds: Int64?
    /// With `?currency=`, the currencies of the rows that no rate converted.
    package var unconverted: [String]? = nil
    /// The zone `payers` and `cohorts` are counted ahead in (`CHARTS_TIME_ZONE`).
    package var countsZone = "UTC"
  }

  /// The chart's rows as a JSON array (text), in period order, how many there are, and where
  /// they came from: a rollup when one is built and holds the chart (the hourly one only when
  /// every period begins at a whole UTC hour), unless `raw` is asked for; the transactions
  /// otherwise. Over `ChartQuery.maxRows`, `rows` is empty and `count` says how many it had.
  package func rows(_ query: ChartQuery, raw: Bool = false) async throws
    -> (rows: String, count: Int64, source: Source)
  {
    var useRollup = false
    // Read for every chart: the answer names the counted zone, which the console opens in.
    let state = try await ChartRollup(database: database).state()
    let countsZone = state.countsZone
    // The rollup sums money per currency as signed: a converted chart reads the transactions.
    if !raw, query.currency == nil,
      ChartSQL.rolledUp.contains(query.name) || ChartSQL.rolledUpByUser.contains(query.name)
    {
      let built = state.asOf != nil
      if built, ChartSQL.rolledUpByUser.contains(query.name) {
        useRollup = true
      } else if built {
        useRollup =
          try await database.queryFirst(ChartSQL.hourAligned(query))?.decode("aligned") ?? false
      }
    }
    // The instant the rows are exact up to comes from the chart's own statement, so a pass
    // finishing in between cannot make the answer name another pass's.
    // Without JIT: a chart's plan is estimated from generated periods and CTEs, often
    // thousands of times over what it reads, which makes PostgreSQL spend seconds compiling
    // a statement that runs in milliseconds (bench/charts; docs/CHARTS.md, "Cost").
    let chart = ChartSQL.chart(query, rollup: useRollup, countsZone: countsZone)
    let found = try await database.withTransaction { tx in
      try await tx.execute("SET LOCAL jit = off")
      return try await tx.query(chart).first
    }
    guard let row = found else {
      return ("[]", 0, Source(rollup: useRollup, countsZone: countsZone))
    }
    return (
      try row.decode("rows"), try row.decode("count"),
      Source(
        rollup: useRollup, asOf: try row.decodeIfPresent("as_of"),
        lagSeconds: try row.decodeIfPresent("lag"),
        unconverted: query.currency == nil
          ? nil
          : (try row.decodeIfPresent("unconverted", as: String.self))?.split(separator: ",").map(
            String.init) ?? [], countsZone: countsZone)
    )
  }

  /// Up to `limit` transactions behind the period holding `period` (a day), after the
  /// transaction id `after`, and the cursor of the next page.
  package func transactions(
    _ query: ChartQuery, period: String, month: Int? = nil, pointCurrency: String? = nil,
    after: String?, limit: Int
  ) async throws -> (items: [ChartPointTransaction], next: String?) {
    let rows = try await database.query(
      ChartSQL.transactions(
        query, period: period, month: month, pointCurrency: pointCurrency, after: after,
        limit: limit)
    ).map(ChartPointTransaction.init(row:))
    return KeysetPage.split(rows, limit: limit) { $0.pageKey }
  }
}
