import AppStore
import HTTP
import Postgres

/// `GET /metrics` in Prometheus text format: this instance's requests, and the state of the
/// orders and work queues read from PostgreSQL (so every instance reports the same truth).
struct MetricsRoutes: Sendable {
  let database: PostgresPool
  let catalog: CatalogCache
  let requests: RequestMetrics
  let appleSettings: AppleConfigurationMonitor
  let pools: DatabasePools
  /// The webhook backlog and attempts, when delivery runs in this process.
  var webhooks: WebhookMetrics? = nil
  /// Apple calls for receipts, when they are judged through the App Store Server API.
  var receiptCalls: ServerAPIReceiptMetrics? = nil

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
      let orders = try await counts(
        "SELECT trade_status AS key, count(*)::bigint AS n FROM orders GROUP BY trade_status",
        TradeStatus.self)
      gauge(
        "orders", "Orders by trade status.",
        TradeStatus.allCases.map { ("{trade_status=\"\($0.rawValue)\"}", orders[$0] ?? 0) })
      let reports = try await database.query(
        "SELECT count(*)::bigint AS n FROM trade_reports WHERE outcome = \(ReportOutcome.pending)")
      gauge(
        "reports_pending", "Reports waiting on Apple.", [("", try reports.first?.decode("n") ?? 0)])
      let notifications = try await counts(
        "SELECT state AS key, count(*)::bigint AS n FROM apple_notifications GROUP BY state",
        NotificationState.self)
      // Every state is a sample, zero included, so an alert on `unhandled` has a series to watch.
      gauge(
        "notifications", "App Store notifications by state.",
        NotificationState.allCases.map {
          ("{state=\"\($0.rawValue)\"}", notifications[$0] ?? 0)
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
      lines += appleSettingsLines()
      lines += try await ReconcileMetrics.lines(database)
      lines += try await webhooks?.render() ?? []
      lines += receiptCalls?.lines ?? []
      lines += await DatabaseMetrics(pools: pools).lines()
      return Response(
        status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4")]),
        body: Array((lines.joined(separator: "\n") + "\n").utf8))
    }
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

  /// This instance's own Apple settings as verifyReceipt judged them: a gauge that is 1 while
  /// a problem stands (an alert's series) and a counter of such answers since start.
  private func appleSettingsLines() -> [String] {
    func labels(_ wrong: Misconfiguration) -> String {
      "{setting=\"\(wrong.setting.variable)\",status=\"\(wrong.status)\","
        + "environment=\"\(wrong.environment)\"}"
    }
    var lines = [
      "# HELP storekeeper_apple_configuration_errors 1 while verifyReceipt blames this instance's "
        + "setting (receipts wait as pending until it is fixed).",
      "# TYPE storekeeper_apple_configuration_errors gauge",
    ]
    lines += appleSettings.current.map {
      "storekeeper_apple_configuration_errors\(labels($0.misconfiguration)) 1"
    }
    lines += [
      "# HELP storekeeper_apple_configuration_errors_total verifyReceipt answers since start that "
        + "blamed this instance's settings.",
      "# TYPE storekeeper_apple_configuration_errors_total counter",
    ]
    lines += appleSettings.totals.map {
      "storekeeper_apple_configuration_errors_total\(labels($0.misconfiguration)) \($0.count)"
    }
    return lines
  }
}
