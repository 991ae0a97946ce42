import HTTP
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// `GET /metrics` through its route: the counts over tables that grow with the store come from
/// the last background refresh, so a scrape reads none of those tables however often it comes.
@Suite(.database) struct MetricsScrapeTests {
  static let token = "metrics-scrape-admin-token-0123456789"
  /// The tables whose counts a scrape must not read.
  static let countedTables =
    "orders, apple_notifications, google_notifications, app_account_token_jobs, "
    + "webhook_endpoints, webhook_deliveries, events"

  /// `url` with a lock timeout on its sessions: a statement that meets a locked table fails
  /// (55P03) instead of waiting, so a scrape that reads one answers an error.
  static func failingOnLocks(_ url: String) -> String {
    url + (url.contains("?") ? "&" : "?") + "options=-c%20lock_timeout%3D200"
  }

  struct Metrics {
    let router: Router
    let snapshot: MetricsSnapshot
  }

  static func metrics(_ h: DomainHarness, on database: PostgresPool) throws -> Metrics {
    let snapshot = MetricsSnapshot(
      sources: [
        OrderCountMetrics(database: database),
        StateCountMetrics(
          database: database,
          webhooks: WebhookMetrics(database: database, attempts: WebhookAttemptCounts())),
      ], logger: DomainHarness.logger)
    var router = APIRouter(logger: DomainHarness.logger)
    MetricsRoutes(
      auth: AdminAuthenticator(
        tokens: [AdminToken(name: "ops", token: token, scope: .read)],
        limiter: AdminFailureLimiter(limit: 10, windowMs: 60_000)),
      snapshot: snapshot, stored: StoredStateMetrics(database: database),
      catalog: try ServedCatalog(repository: h.catalog, logger: DomainHarness.logger),
      requests: RequestMetrics(), appleSettings: h.appleSettings,
      pools: DatabasePools(
        primary: database, reads: database, direct: database, replica: nil,
        sessionURL: database.configuration.url)
    ).register(&router)
    return Metrics(router: router.router, snapshot: snapshot)
  }

  static func scrape(_ router: Router) async -> (status: Int, lines: Set<String>) {
    let response = await router.handle(
      Request(
        method: .get, target: "/metrics",
        headers: HTTPHeaders([("Authorization", "Bearer \(token)")])))
    let text = String(decoding: response.body, as: UTF8.self)
    return (response.status, Set(text.split(separator: "\n").map(String.init)))
  }

  static func addUnhandledNotification(_ h: DomainHarness, _ uuid: String) async throws {
    try await h.database.execute(
      """
      INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state)
      VALUES (\(uuid), 'SOMETHING_NEW', '{}', 'unhandled')
      """)
  }

  @Test func aScrapeReportsTheLastRefreshAndReadsNoCountedTable() async throws {
    try await DomainHarness.with { h in
      let scrapes = PostgresPool(
        configuration: PostgresConfiguration(
          url: Self.failingOnLocks(h.database.configuration.url)),
        logger: DomainHarness.logger)
      do {
        try await Self.addUnhandledNotification(h, "n-1")
        try await h.database.execute(
          """
          INSERT INTO google_notifications (message_id, subscription, package_name, kind, data, state)
          VALUES ('m-1', 'projects/p/subscriptions/s', 'com.example', 'test', '{}', 'failed')
          """)
        try await h.database.execute(
          """
          INSERT INTO app_account_token_jobs
            (original_transaction_id, environment, app_account_token, user_id, trade_no)
          VALUES ('1000', 'Production', '6f9619ff-8b86-d011-b42d-00cf4fc964ff', 'alice', 't-1')
          """)
        try await h.database.execute(
          """
          INSERT INTO webhook_endpoints (id, url, secret)
          VALUES ('00000000-0000-0000-0000-0000000000e1', 'https://hooks.example/a', 'secret')
          """)
        let metrics = try Self.metrics(h, on: scrapes)
        await metrics.snapshot.refresh()

        // Every table a count reads is locked by another session: a scrape that read one
        // would fail at the lock timeout. It answers from the refresh.
        let locked = try await h.database.withTransaction { transaction in
          _ = try await transaction.execute(
            PostgresQuery(
              unsafeSQL: "LOCK TABLE \(Self.countedTables) IN ACCESS EXCLUSIVE MODE"))
          return await Self.scrape(metrics.router)
        }
        #expect(locked.status == 200)
        for expected in [
          "storekeeper_notifications{state=\"unhandled\"} 1",
          "storekeeper_notifications{state=\"processed\"} 0",
          "storekeeper_google_notifications{state=\"failed\"} 1",
          "storekeeper_app_account_tokens{state=\"pending\"} 1",
          "storekeeper_webhook_backlog{endpoint_id=\"00000000-0000-0000-0000-0000000000e1\"} 0",
          "storekeeper_orders{trade_status=\"WAIT_BUYER_PAY\"} 0",
          "storekeeper_metrics_refreshes_total 1",
        ] {
          #expect(locked.lines.contains(expected), "\(expected) in \(locked.lines.sorted())")
        }

        // A new row shows at the next refresh, not at the next scrape.
        try await Self.addUnhandledNotification(h, "n-2")
        let before = await Self.scrape(metrics.router)
        #expect(before.lines.contains("storekeeper_notifications{state=\"unhandled\"} 1"))
        await metrics.snapshot.refresh()
        let after = await Self.scrape(metrics.router)
        #expect(after.lines.contains("storekeeper_notifications{state=\"unhandled\"} 2"))
        #expect(after.lines.contains("storekeeper_metrics_refreshes_total 2"))
      } catch {
        await scrapes.shutdown()
        throw error
      }
      await scrapes.shutdown()
    }
  }

  /// Audit failures, finding 2: one gauge PostgreSQL could not count made the whole scrape a
  /// 503, hiding what is held in memory (the 5xx answers an operator watches while the primary
  /// is down) and the refresh counter whose flat line is the stale alert.
  @Test func aScrapeWithTheDatabaseDownShowsWhatIsHeldInMemory() async throws {
    try await DomainHarness.with { h in
      let down = PostgresPool(
        configuration: PostgresConfiguration(
          url: "postgresql://storekeeper@127.0.0.1:1/none?connect_timeout=1"),
        logger: DomainHarness.logger)
      let metrics = try Self.metrics(h, on: down)
      await metrics.snapshot.refresh()
      let scraped = await Self.scrape(metrics.router)
      await down.shutdown()
      #expect(scraped.status == 200)
      // Both refreshed sources had nothing yet, and the per-scrape gauges failed too.
      #expect(scraped.lines.contains("storekeeper_metrics_unread_sources 3"), "\(scraped.lines)")
      #expect(scraped.lines.contains("storekeeper_metrics_refreshes_total 0"))
      #expect(scraped.lines.contains { $0.hasPrefix("storekeeper_catalog_products ") })
      #expect(!scraped.lines.contains { $0.hasPrefix("storekeeper_orders{") })
    }
  }
}
