import Postgres
import StorekeeperCore

/// The `/metrics` gauges that count rows by state in tables that are never purged, and the
/// webhook backlog: `apple_notifications` gains a row for every renewal of every subscriber,
/// and no index covers `state` for all rows, so each count is a scan that grows with the store
/// (half a second at 1.5 million notifications, on a session payments need). They are
/// `RefreshedMetrics`: `MetricsSnapshot` runs them every `METRICS_REFRESH_INTERVAL`, never a
/// scrape, and every instance reports the same values up to that lag.
package struct StateCountMetrics: RefreshedMetrics {
  let database: PostgresPool
  var webhooks: WebhookMetrics? = nil

  package init(database: PostgresPool, webhooks: WebhookMetrics? = nil) {
    self.database = database
    self.webhooks = webhooks
  }

  package func lines() async throws -> [String] {
    var lines: [String] = []
    func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: Int64)]) {
      lines.append(
        "# HELP storekeeper_\(name) \(help) (recomputed every METRICS_REFRESH_INTERVAL, not per "
          + "scrape).")
      lines.append("# TYPE storekeeper_\(name) gauge")
      for sample in samples {
        lines.append("storekeeper_\(name)\(sample.labels) \(sample.value)")
      }
    }
    let notifications = try await counts(
      "SELECT state AS key, count(*)::bigint AS n FROM apple_notifications GROUP BY state",
      NotificationState.self)
    // Every state is a sample, zero included, so an alert on `unhandled` has a series to watch.
    gauge(
      "notifications", "App Store notifications by state",
      NotificationState.allCases.map {
        ("{state=\"\($0.rawValue)\"}", notifications[$0] ?? 0)
      })
    let pushes = try await counts(
      "SELECT state AS key, count(*)::bigint AS n FROM google_notifications GROUP BY state",
      GoogleNotificationStore.State.self)
    gauge(
      "google_notifications", "Google Play pushes by state",
      GoogleNotificationStore.State.allCases.map {
        ("{state=\"\($0.rawValue)\"}", pushes[$0] ?? 0)
      })
    let tokens = try await counts(
      "SELECT state AS key, count(*)::bigint AS n FROM app_account_token_jobs GROUP BY state",
      AccountTokenJobState.self)
    gauge(
      "app_account_tokens", "Set App Account Token calls owed to Apple, by state",
      AccountTokenJobState.allCases.map {
        ("{state=\"\($0.rawValue)\"}", tokens[$0] ?? 0)
      })
    lines += try await webhooks?.storedLines() ?? []
    return lines
  }

  /// `key, n` rows as a dictionary keyed by the state enum.
  private func counts<Key: PostgresDecodable & Hashable>(_ query: PostgresQuery, _: Key.Type)
    async throws -> [Key: Int64]
  {
    var result: [Key: Int64] = [:]
    for row in try await database.query(query) {
      result[try row.decode("key", as: Key.self)] = try row.decode("n")
    }
    return result
  }
}
