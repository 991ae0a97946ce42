import Postgres
import StorekeeperCore

/// The `/metrics` gauges read from PostgreSQL on each scrape (so every instance reports the
/// same truth, fresh), each over a partial index or a table of few rows: pending reports, the
/// notification history's progress, reconciliation (its repairs are rare) and the charts'
/// rollup lag. Counts over
/// tables that grow with the store (orders, notifications and token jobs by state, the webhook
/// backlog) are not here: `OrderCountMetrics` and `StateCountMetrics` run in the background.
package struct StoredStateMetrics: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  func lines() async throws -> [String] {
    var lines: [String] = []
    func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: Int64)]) {
      lines.append("# HELP storekeeper_\(name) \(help)")
      lines.append("# TYPE storekeeper_\(name) gauge")
      for sample in samples {
        lines.append("storekeeper_\(name)\(sample.labels) \(sample.value)")
      }
    }
    // Per store: a Google purchase pending for days (a slow payment method) is no sign of
    // trouble with Apple.
    let reports = try await database.query(
      """
      SELECT count(*) FILTER (WHERE proof_kind IS DISTINCT FROM 'google_purchase')::bigint AS apple,
             count(*) FILTER (WHERE proof_kind = 'google_purchase')::bigint AS google
      FROM trade_reports WHERE outcome = \(ReportOutcome.pending)
      """)
    gauge(
      "reports_pending", "Reports waiting on their store, by store.",
      [
        ("{store=\"app_store\"}", try reports.first?.decode("apple") ?? 0),
        ("{store=\"google_play\"}", try reports.first?.decode("google") ?? 0),
      ])
    // One reader per environment (row 1 production, 2 sandbox: NotificationRecovery).
    let recovery = try await database.query(
      """
      SELECT CASE id WHEN 1 THEN 'production' ELSE 'sandbox' END AS environment,
             coalesce(extract(epoch FROM checked_until), 0)::bigint AS checked_until,
             (last_error IS NOT NULL)::int::bigint AS failing
      FROM notification_recovery ORDER BY id
      """)
    func byEnvironment(_ column: String) throws -> [(labels: String, value: Int64)] {
      try recovery.map {
        (
          "{environment=\"\(try $0.decode("environment", as: String.self))\"}",
          try $0.decode(column)
        )
      }
    }
    gauge(
      "notification_recovery_checked_until_seconds",
      "How far each environment's App Store notification history has been read (0: never).",
      try byEnvironment("checked_until"))
    gauge(
      "notification_recovery_failing",
      "1 when the last pass over the environment's notification history failed.",
      try byEnvironment("failing"))
    lines += try await ReconcileMetrics.lines(database)
    // The charts' rollup: how far behind now it is exact (-1 before the first build).
    let rollup = try await ChartRollup(database: database).state()
    gauge(
      "chart_rollup_lag_seconds",
      "Seconds between now and the instant the charts' rollup is exact up to (-1: never built).",
      [("", rollup.lagSeconds ?? -1)])
    gauge(
      "chart_rollup_build_milliseconds", "How long the last rebuild of the charts' rollup took.",
      [("", rollup.buildMs ?? 0)])
    return lines
  }
}
