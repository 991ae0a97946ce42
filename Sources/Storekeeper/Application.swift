import HTTP
import Postgres
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLogging
import StorekeeperWorkers

/// Storekeeper assembled: the domain first, then the API and the workers from it; started and
/// stopped in order (migrations, the catalog and its LISTEN connection, the listeners, the
/// workers as a list).
public final class Application: Sendable {
  public let config: AppConfig
  let logger: Logger
  let migrator: Migrator
  let domain: Domain
  let edge: Edge
  /// Reloads the served catalog when it changes.
  let listener: PostgresListener
  let workers: ServiceGroup

  /// The public listener's routes, callable in-process by tests.
  var router: Router { edge.router }
  /// The admin listener's routes, when it has its own.
  var adminRouter: Router? { edge.adminRouter }
  /// Every route served, on either listener.
  var routes: [(method: HTTPMethod, pattern: String)] {
    edge.router.routes + (edge.adminRouter?.routes ?? [])
  }

  public init(config: AppConfig, logger: Logger) throws {
    self.config = config
    self.logger = logger
    migrator = Migrator(
      directory: config.migrationsDirectory, logger: logger.with("component", "migrations"))
    let domain = try Domain(config: config, logger: logger)
    self.domain = domain
    let edge = try Edge(config: config, domain: domain, migrator: migrator, logger: logger)
    self.edge = edge
    let catalog = edge.catalog
    listener = PostgresListener(
      url: domain.pools.sessionURL,
      urlVariable: config.databaseDirectURL == nil ? "DATABASE_URL" : "DATABASE_DIRECT_URL",
      channels: [CatalogRepository.channel],
      logger: logger.with("component", "listener"),
      onNotification: { _, _ in catalog.requestReload() },
      // After any (re)connect a full reload, so changes made while disconnected are not missed.
      onConnect: { catalog.requestReload() })
    workers = ServiceGroup(
      try Self.services(config: config, domain: domain, edge: edge, logger: logger),
      logger: logger)
  }

  /// Migrates (unless disabled), loads the catalog, starts listening, serving and working.
  /// Returns the port the server is bound to.
  public func start() async throws -> Int {
    if config.migrateOnStart {
      // On the direct session when there is one: the run holds a session advisory lock.
      let pools = domain.pools
      let applied = try await migrator.migrate(pools.direct)
      // Nothing else uses the direct pool: its session is not kept past start-up.
      if pools.direct !== pools.primary { await pools.direct.shutdown() }
      if !applied.isEmpty {
        logger.notice("migrations applied", ["names": .string(applied.joined(separator: ","))])
      }
    }
    // Before anything is timed: from here on this instance keeps PostgreSQL's time, read again
    // every 30 s by a worker (the "database-time" loop).
    try await domain.time.read(domain.database)
    // Before anything is served or written: a database restored into another cluster holds
    // transaction ids its counter has not reached (TransactionIdsAhead).
    try await TransactionIdCheck.verify(domain.database)
    try await edge.catalog.reload()
    // The rollup's passes count in this zone: a name PostgreSQL does not know would fail each
    // of them, long after start-up said nothing.
    let zone = config.chartsTimeZone
    guard try await ChartRepository(database: domain.database).knowsTimeZone(zone) else {
      throw ConfigError(
        variable: "CHARTS_TIME_ZONE",
        problem: "is not a time zone PostgreSQL knows (pg_timezone_names), got \"\(zone)\"")
    }
    try await fetchAppKeySet()
    listener.start()
    let port = try edge.server.start()
    if let adminServer = edge.adminServer {
      let adminPort = try adminServer.start()
      logger.notice(
        "admin API serving",
        ["host": .string(config.adminHost ?? config.host), "port": .int(adminPort)])
    }
    workers.start()
    logger.notice("storekeeper serving", ["host": .string(config.host), "port": .int(port)])
    return port
  }

  /// Fetches `APP_JWT_JWKS_URL`'s key set before serving, so a wrong URL (a typo answering
  /// 404, a page that is not a key set) or an unreachable issuer is said at start-up rather
  /// than found by the first user's 401. Not fatal: an issuer's outage must not stop restarts,
  /// and the key set is fetched again when a token needs it. `/readyz` and `/metrics` report
  /// it until a fetch succeeds.
  func fetchAppKeySet() async throws {
    guard let jwks = edge.appJWKS else { return }
    await jwks.prefetch()
    try Task.checkCancellation()
    let health = await jwks.health
    guard let detail = AppJWKSHealth.detail(health) else { return }
    var fields: [String: LogValue] = ["setting": .string(AppJWKSHealth.variable)]
    if let failure = health.failure { fields["error"] = .string(failure.detail) }
    logger.error("APP_JWT_JWKS_URL at start-up: \(detail)", fields)
  }

  /// How long the workers get to finish their current run on shutdown, after the requests'
  /// own grace period.
  static let workerStopGracePeriod = Duration.seconds(10)

  /// Stops accepting, finishes in-flight requests (bounded), stops the workers (bounded),
  /// closes the pool.
  public func shutdown() async {
    logger.notice("shutting down")
    // Both listeners stop accepting at once and share one grace period: one after the other,
    // the admin port took new requests while the public one drained, and the graces added up.
    async let publicStopped: Void = edge.server.shutdown()
    async let adminStopped: Void? = edge.adminServer?.shutdown()
    _ = await (publicStopped, adminStopped)
    let running = await workers.shutdown(within: Self.workerStopGracePeriod)
    if !running.isEmpty {
      // A worker waits on the database, a store or a webhook receiver that is slow to answer
      // (a webhook attempt may take WEBHOOK_TIMEOUT, a store call APPLE_TIMEOUT). Exiting is
      // safe: what it was writing is rolled back with its session, and claimed work (an
      // attempt unrecorded, sent again) is taken up again when its lease ends, here or on
      // another instance.
      logger.warning(
        "background work did not stop in time; exiting without it",
        [
          "services": .string(running.joined(separator: ",")),
          "grace_ms": .int(Int(Self.workerStopGracePeriod.components.seconds) * 1000),
        ])
    }
    listener.stop()
    await domain.pools.shutdown()
    logger.notice("stopped")
  }
}
