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

  /// The chart's rows as a JSON array (text), in period order.
  package func rows(_ query: ChartQuery) async throws -> String {
    try await database.queryFirst(ChartSQL.chart(query))?.decode("rows") ?? "[]"
  }

  /// Up to `limit` transactions behind the period holding `period` (a day), after the
  /// transaction id `after`, and the cursor of the next page.
  package func transactions(_ query: ChartQuery, period: String, after: String?, limit: Int)
    async throws -> (items: [ChartPointTransaction], next: String?)
  {
    let rows = try await database.query(
      ChartSQL.transactions(query, period: period, after: after, limit: limit)
    ).map(ChartPointTransaction.init(row:))
    return KeysetPage.split(rows, limit: limit) { $0.transactionId }
  }
}
