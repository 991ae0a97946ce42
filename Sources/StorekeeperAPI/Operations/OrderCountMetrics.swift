import Postgres
import StorekeeperCore

/// `storekeeper_orders{trade_status}`: the one gauge whose query scans the largest table
/// (`count(*) … GROUP BY` over every order, about 100 ms at a million), so it is not run per
/// scrape: `MetricsSnapshot` runs it every `METRICS_REFRESH_INTERVAL`.
package struct OrderCountMetrics: RefreshedMetrics {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  package func lines() async throws -> [String] {
    var counts: [TradeStatus: Int64] = [:]
    for row in try await database.query(
      "SELECT trade_status AS key, count(*)::bigint AS n FROM orders GROUP BY trade_status")
    {
      counts[try row.decode("key", as: TradeStatus.self)] = try row.decode("n")
    }
    return [
      "# HELP storekeeper_orders Orders by trade status (recomputed every "
        + "METRICS_REFRESH_INTERVAL, not per scrape).",
      "# TYPE storekeeper_orders gauge",
    ]
      + TradeStatus.allCases.map {
        "storekeeper_orders{trade_status=\"\($0.rawValue)\"} \(counts[$0] ?? 0)"
      }
  }
}
