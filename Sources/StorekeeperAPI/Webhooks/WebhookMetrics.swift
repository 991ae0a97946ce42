import Postgres
import StorekeeperCore

/// The webhook lines of `/metrics`: the backlog and the age of the oldest undelivered event per
/// endpoint (from PostgreSQL in the background, the same on every instance) and this instance's attempts by
/// outcome (from memory).
package struct WebhookMetrics: Sendable {
  let database: PostgresPool
  let attempts: WebhookAttemptCounts

  package init(database: PostgresPool, attempts: WebhookAttemptCounts) {
    self.database = database
    self.attempts = attempts
  }

  /// The backlog, from PostgreSQL: read by `MetricsSnapshot`'s refresh (`StateCountMetrics`),
  /// not by each scrape, since it joins every pending delivery to its event.
  func storedLines() async throws -> [String] {
    var lines = [
      "# HELP storekeeper_webhook_backlog Deliveries not yet delivered nor given up, per endpoint "
        + "(recomputed every METRICS_REFRESH_INTERVAL, not per scrape).",
      "# TYPE storekeeper_webhook_backlog gauge",
    ]
    var ages = [
      "# HELP storekeeper_webhook_oldest_undelivered_seconds Age of the oldest event waiting "
        + "for delivery, per endpoint (0: none; recomputed every METRICS_REFRESH_INTERVAL).",
      "# TYPE storekeeper_webhook_oldest_undelivered_seconds gauge",
    ]
    let rows = try await database.query(
      """
      SELECT w.id::text AS endpoint_id, count(d.id)::bigint AS backlog,
             coalesce(extract(epoch FROM now() - min(e.created_at)), 0)::bigint AS oldest
      FROM webhook_endpoints w
      LEFT JOIN webhook_deliveries d ON d.endpoint_id = w.id AND d.state = \(literal: .pending)
      LEFT JOIN events e ON e.position = d.event_position
      WHERE w.deleted_at IS NULL
      GROUP BY w.id ORDER BY w.id
      """)
    for row in rows {
      let label = "{endpoint_id=\"\(try row.decode("endpoint_id", as: String.self))\"}"
      lines.append(
        "storekeeper_webhook_backlog\(label) \(try row.decode("backlog", as: Int64.self))")
      ages.append(
        "storekeeper_webhook_oldest_undelivered_seconds\(label) \(try row.decode("oldest", as: Int64.self))"
      )
    }
    return lines + ages
  }

  /// This instance's attempts, from memory: fresh on every scrape.
  func attemptLines() -> [String] {
    var lines = [
      "# HELP storekeeper_webhook_attempts_total Webhook attempts by this instance since start, "
        + "by outcome.",
      "# TYPE storekeeper_webhook_attempts_total counter",
    ]
    let counts = attempts.all
    for outcome in [
      WebhookQueue.Outcome.delivered, .httpError, .timeout, .connectionFailed,
    ] {
      lines.append(
        "storekeeper_webhook_attempts_total{outcome=\"\(outcome.rawValue)\"} \(counts[outcome] ?? 0)"
      )
    }
    return lines
  }
}
