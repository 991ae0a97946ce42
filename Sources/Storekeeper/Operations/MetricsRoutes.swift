import HTTP
import Postgres

/// `GET /metrics` in Prometheus text format: this instance's requests, and the state of the
/// orders and work queues read from PostgreSQL (so every instance reports the same truth).
struct MetricsRoutes: Sendable {
  let database: PostgresPool
  let catalog: CatalogCache
  let requests: RequestMetrics

  func register(_ router: inout APIRouter) {
    router.add(.get, "/metrics") { _, _ in
      var lines = requests.render()
      func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: Int64)]) {
        lines.append("# HELP storekeeper_\(name) \(help)")
        lines.append("# TYPE storekeeper_\(name) gauge")
        for sample in samples {
          lines.append("storekeeper_\(name)\(sample.labels) \(sample.value)")
        }
      }
      gauge(
        "catalog_products", "Active products served from memory.",
        [("", Int64(catalog.snapshot.byId.count))])
      let orders = try await database.query(
        "SELECT trade_status, count(*)::bigint AS n FROM orders GROUP BY trade_status ORDER BY trade_status"
      )
      gauge(
        "orders", "Orders by trade status.",
        try orders.map {
          (
            "{trade_status=\"\(try $0.decode("trade_status", as: String.self))\"}",
            try $0.decode("n")
          )
        })
      let reports = try await database.query(
        "SELECT count(*)::bigint AS n FROM trade_reports WHERE outcome = 'pending'")
      gauge(
        "reports_pending", "Reports waiting on Apple.", [("", try reports.first?.decode("n") ?? 0)])
      let notifications = try await database.query(
        "SELECT state, count(*)::bigint AS n FROM apple_notifications GROUP BY state ORDER BY state"
      )
      gauge(
        "notifications", "App Store notifications by state.",
        try notifications.map {
          ("{state=\"\(try $0.decode("state", as: String.self))\"}", try $0.decode("n"))
        })
      let recovery = try await database.query(
        """
        SELECT coalesce(extract(epoch FROM checked_until), 0)::bigint AS checked_until,
               (last_error IS NOT NULL)::int::bigint AS failing
        FROM notification_recovery WHERE id = 1
        """
      ).first
      gauge(
        "notification_recovery_checked_until_seconds",
        "How far the App Store notification history has been read (0: never).",
        [("", try recovery?.decode("checked_until") ?? 0)])
      gauge(
        "notification_recovery_failing", "1 when the last notification history pass failed.",
        [("", try recovery?.decode("failing") ?? 0)])
      return Response(
        status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4")]),
        body: Array((lines.joined(separator: "\n") + "\n").utf8))
    }
  }
}
