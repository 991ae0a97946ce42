import AppStore
import Foundation
import HTTP
import Postgres
import StorekeeperLogging
import Synchronization

/// Storekeeper assembled: the database pool, the catalog and its LISTEN connection, the
/// background workers and the HTTP server, started and stopped in order.
public final class Application: Sendable {
  public let config: AppConfig
  let logger: Logger
  let database: PostgresPool
  /// The primary's pool (`database`), the read replica's and the direct session's.
  let pools: DatabasePools
  let migrator: Migrator
  let catalog: ServedCatalog
  let listener: PostgresListener
  let server: HTTPServer
  /// The admin listener (`ADMIN_PORT`), serving the admin API and `/metrics` apart from the
  /// public port; nil when both are served on the public port.
  let adminServer: HTTPServer?
  let loops: [BackgroundLoop]
  let notificationLoop: BackgroundLoop
  /// Sends webhooks; drained on shutdown so attempts in flight are recorded.
  let webhookDispatcher: WebhookDispatcher
  /// The routes with their handlers: served by `server`, and callable in-process by tests.
  let router: Router
  /// The admin listener's routes, when it has its own.
  let adminRouter: Router?
  /// Every route served, on either listener.
  var routes: [(method: HTTPMethod, pattern: String)] {
    router.routes + (adminRouter?.routes ?? [])
  }

  public init(config: AppConfig, logger: Logger) throws {
    self.config = config
    self.logger = logger
    let pools = DatabasePools(config: config, logger: logger)
    self.pools = pools
    let database = pools.primary
    self.database = database
    migrator = Migrator(
      directory: config.migrationsDirectory, logger: logger.with("component", "migrations"))

    let catalogRepository = CatalogRepository(database: database)
    let catalog = try ServedCatalog(
      repository: catalogRepository, logger: logger.with("component", "catalog"))
    self.catalog = catalog
    listener = PostgresListener(
      url: pools.sessionURL, channels: [CatalogRepository.channel],
      logger: logger.with("component", "listener"),
      onNotification: { _, _ in catalog.requestReload() },
      // After any (re)connect a full reload, so changes made while disconnected are not missed.
      onConnect: { catalog.requestReload() })

    let appStore = try Self.appStoreConfiguration(config, logger: logger)
    let appleSettings = AppleConfigurationMonitor(
      logger: logger.with("component", "verify-receipt"))
    var verifier = ProofVerifier(
      signed: try SignedDataVerifier(configuration: appStore),
      appReceipts: try AppReceiptSignatureVerifier(configuration: appStore),
      receipts: ReceiptVerifier(
        configuration: appStore, logger: logger.with("component", "verify-receipt")),
      appleSettings: appleSettings)
    verifier.serverAPI = try Self.serverAPIReceiptVerifier(
      config, signed: verifier.signed, logger: logger)
    verifier.serverAPIOnly = config.receiptVerification == .serverAPI

    // The notification worker is created first so settlement can wake it.
    let notificationBox = LoopBox()
    let clock = WallClock.system
    let orders = OrderRepository(database: database, outbox: EventOutbox(clock: clock))
    let idempotency = IdempotencyStore(database: database)
    let reports = ReportStore(
      database: database, leaseMs: max(60_000, 3 * config.appleTimeoutMs),
      policy: RetryPolicy(baseMs: config.retryBaseMs, windowMs: config.retryWindowMs), clock: clock,
      retentionMs: config.proofRetentionMs)
    var settlement = SettlementService(database: database, orders: orders, reports: reports) {
      notificationBox.wake()
    }
    settlement.sandboxCredits = config.sandboxCredits
    let entitlements = EntitlementRepository(database: database, clock: clock)
    let webhookBox = LoopBox()
    let webhookQueue = WebhookQueue(database: database, settings: config.webhooks, clock: clock)
    let webhookDispatcher = WebhookDispatcher(
      queue: webhookQueue, transport: URLSessionWebhookTransport(), clock: clock,
      logger: logger.with("component", "webhooks"), wake: { webhookBox.wake() })
    self.webhookDispatcher = webhookDispatcher
    let gate = VerificationGate(
      cpu: config.verifyConcurrency, apple: config.verifyReceiptConcurrency,
      queueLength: config.verifyQueueLength,
      queueTimeout: .milliseconds(config.verifyQueueTimeoutMs))
    let processor = ReportProcessor(
      orders: orders, reports: reports, verifier: verifier, settlement: settlement, gate: gate)
    let receipts = ReceiptService(
      orders: orders, reports: reports, verifier: verifier, settlement: settlement,
      catalog: catalogRepository, entitlements: entitlements, gate: gate)
    let notifications = NotificationService(
      database: database, verifier: verifier.signed, settlement: settlement,
      catalog: catalogRepository, clock: clock, logger: logger.with("component", "notifications"))
    let appAuth = try AppAuthenticator(config.appAuth, logger: logger.with("component", "auth"))
    if config.allowInsecureURLs {
      logger.warning(
        "ALLOW_INSECURE_URLS=1: Apple's and the JWKS URLs may be plain http; use this only for tests and demos"
      )
    }
    // Who a request comes from, one rule for the rate limits and the admin failure limit.
    let clientAddress = ClientAddress(trustedProxies: config.trustedProxies)
    let auth = AdminAuthenticator(
      tokens: config.adminTokens, metricsToken: config.metricsToken,
      limiter: AdminFailureLimiter(
        limit: config.adminAuthFailureLimit, windowMs: config.adminAuthFailureWindowMs),
      addresses: clientAddress)

    let limiter = RateLimiter(
      perAddress: config.rateLimitPerAddress, perUser: config.rateLimitPerUser,
      proofBytesPerUser: config.proofBytesPerUser, maxKeys: config.rateLimitMaxKeys,
      clientAddress: clientAddress)
    var router = APIRouter(
      logger: logger.with("component", "http"), limiter: limiter,
      identify: { request, context in try await appAuth.caller(request, context) })
    OperationsRoutes(
      database: database, migrator: migrator, openAPI: try Self.openAPI(config),
      appleSettings: appleSettings,
      replica: pools.replica.map { ReplicaMonitor(replica: $0, primary: database) }
    ).register(&router)
    CatalogRoutes(cache: catalog).register(&router)
    let requestMetrics = RequestMetrics()
    OrderRoutes(
      database: database, orders: orders, idempotency: idempotency,
      ttlSeconds: config.orderTTLSeconds, auth: appAuth,
      maxOpenOrders: config.maxOpenOrdersPerUser,
      groupCommit: OrderGroupCommit(
        database: database, orders: orders, idempotency: idempotency,
        ttlSeconds: config.orderTTLSeconds, maxOpen: config.maxOpenOrdersPerUser,
        maxBatch: config.orderBatchMax, maxFlushes: config.orderBatchFlushes,
        logger: logger.with("component", "orders"))
    ).register(&router)
    SettlementRoutes(processor: processor, receipts: receipts, auth: appAuth).register(&router)
    EntitlementRoutes(repository: entitlements, auth: appAuth).register(&router)
    let offerSigner = try Self.offerSigner(config)
    if let offerSigner {
      logger.notice("promotional offers are signed", ["key_id": .string(offerSigner.keyId)])
    } else {
      logger.notice(
        "promotional offers are off: set APPLE_OFFER_KEY_FILE and APPLE_OFFER_KEY_ID (or the APPLE_API_KEY_* settings) to sign them"
      )
    }
    OfferRoutes(signer: offerSigner, catalog: catalog, auth: appAuth, clock: clock)
      .register(&router)
    let notificationRoutes = NotificationRoutes(
      service: notifications, auth: auth, wake: { notificationBox.wake() },
      listings: NotificationListing(database: pools.reads))
    notificationRoutes.register(&router)

    let console = ConsoleAssets.load(
      directory: config.consoleDirectory, logger: logger.with("component", "console"))
    let webhookMetrics = WebhookMetrics(database: database, dispatcher: webhookDispatcher)
    let metricsSnapshot = MetricsSnapshot(
      source: OrderCountMetrics(database: database), logger: logger.with("component", "metrics"))
    // The admin surface: the admin API and /metrics, on the public listener or on its own.
    func registerAdmin(_ router: inout APIRouter) {
      MetricsRoutes(
        auth: auth, snapshot: metricsSnapshot,
        stored: StoredStateMetrics(database: database, webhooks: webhookMetrics),
        catalog: catalog, requests: requestMetrics,
        appleSettings: appleSettings, pools: pools, webhooks: webhookMetrics,
        receiptCalls: verifier.serverAPI?.metrics, verification: gate
      )
      .register(&router)
      AdminProductRoutes(auth: auth, repository: catalogRepository, cache: catalog)
        .register(&router)
      AdminOrderRoutes(
        auth: auth, orders: orders, database: database,
        listings: OrderRepository(database: pools.reads)
      ).register(&router)
      AdminTransactionRoutes(
        auth: auth, transfers: TransferService(settlement: settlement, catalog: catalogRepository)
      ).register(&router)
      notificationRoutes.registerAdmin(&router)
      AdminAuditRoutes(auth: auth, audit: AuditLog(database: pools.reads)).register(&router)
      AdminReconcileRoutes(auth: auth, repairs: ReconcileRepairLog(database: pools.reads)).register(
        &router)
      EventRoutes(auth: auth, feed: EventFeed(database: pools.reads)).register(&router)
      AdminWebhookRoutes(
        auth: auth, store: WebhookStore(database: database, settings: config.webhooks),
        log: WebhookDeliveryLog(database: database), entitlements: entitlements,
        allowInsecureURLs: config.allowInsecureURLs, wake: { webhookBox.wake() }
      ).register(&router)
      AdminConsoleRoutes(auth: auth, database: pools.reads).register(&router)
      AdminUserRoutes(
        auth: auth, entitlements: entitlements,
        adjustments: ManualAdjustments(database: database, outbox: orders.outbox),
        history: UserHistory(database: database)
      ).register(&router)
      if let console { ConsoleRoutes(assets: console).register(&router) }
    }
    var serverConfig = ServerConfiguration()
    serverConfig.host = config.host
    serverConfig.port = config.port
    serverConfig.eventLoopCount = config.eventLoops
    serverConfig.maxConnections = config.maxConnections
    if let adminPort = config.adminPort {
      var admin = APIRouter(logger: logger.with("component", "http-admin"))
      OperationsRoutes.registerLiveness(&admin)
      registerAdmin(&admin)
      var adminConfig = serverConfig
      adminConfig.host = config.adminHost ?? config.host
      adminConfig.port = adminPort
      // Admin traffic is light: one loop keeps the listener from costing a thread per core.
      adminConfig.eventLoopCount = 1
      adminRouter = admin.router
      adminServer = HTTPServer(
        configuration: adminConfig, router: admin.router,
        logger: logger.with("component", "http-admin"), observer: requestMetrics)
    } else {
      registerAdmin(&router)
      adminRouter = nil
      adminServer = nil
    }

    self.router = router.router
    server = HTTPServer(
      configuration: serverConfig, router: router.router, logger: logger.with("component", "http"),
      observer: requestMetrics)

    let sweeper = BackgroundLoop(
      name: "order-sweeper", intervalMs: config.sweepIntervalMs, logger: logger
    ) {
      do {
        let closed = try await orders.closeExpired(now: clock.now())
        if closed > 0 { logger.info("expired orders closed", ["count": .int(closed)]) }
        _ = try await idempotency.removeExpired()
        let lapsed = try await orders.outbox.sweepExpired(on: database)
        if lapsed > 0 { logger.info("entitlement expiry events written", ["count": .int(lapsed)]) }
        let purged = try await reports.purgeProofs()
        if purged > 0 { logger.info("stored proofs purged", ["count": .int(purged)]) }
      } catch {
        logger.warning("order sweep failed", ["error": .string("\(error)")])
      }
    }
    let retryWorker = ReportRetryWorker(
      reports: reports, orders: orders, processor: processor, receipts: receipts,
      logger: logger.with("component", "report-retry"))
    let retryLoop = BackgroundLoop(
      name: "report-retry", intervalMs: min(config.retryBaseMs, 5000), logger: logger
    ) { await retryWorker.runOnce() }
    notificationLoop = BackgroundLoop(name: "notifications", intervalMs: 5000, logger: logger) {
      await notifications.processPending()
    }
    notificationBox.set(notificationLoop)
    let webhookLoop = BackgroundLoop(
      name: "webhooks", intervalMs: config.webhooks.pollIntervalMs, logger: logger
    ) { await webhookDispatcher.runOnce() }
    webhookBox.set(webhookLoop)
    let metricsLoop = BackgroundLoop(
      name: "metrics", intervalMs: config.metricsRefreshIntervalMs, logger: logger
    ) { await metricsSnapshot.refresh() }
    var loops = [sweeper, retryLoop, notificationLoop, webhookLoop, metricsLoop]
    if let client = try Self.notificationHistoryClient(config) {
      let recovery = NotificationRecovery(
        database: database, client: client, notifications: notifications,
        logger: logger.with("component", "notification-recovery"), wake: { notificationBox.wake() })
      loops.append(
        BackgroundLoop(
          name: "notification-recovery", intervalMs: config.notificationRecoveryIntervalMs,
          logger: logger
        ) { await recovery.runOnce() })
    }
    if let intervalMs = config.reconcile.intervalMs,
      let reconciler = try Self.reconciler(
        config, database: database, verifier: verifier.signed, settlement: settlement,
        catalog: catalogRepository, clock: clock, appleSettings: appleSettings,
        logger: logger.with("component", "reconcile"))
    {
      let schedule = ReconcileSchedule(reconciler: reconciler, intervalMs: intervalMs, clock: clock)
      loops.append(
        BackgroundLoop(name: "reconcile", intervalMs: schedule.tickMs, logger: logger) {
          await schedule.runOnce()
        })
    }
    self.loops = loops
  }

  /// The App Store Server API client when a key is configured; nil leaves recovery off.
  static func notificationHistoryClient(_ config: AppConfig) throws -> NotificationHistoryClient? {
    guard let key = try serverAPIKey(config) else { return nil }
    guard let url = URL(string: config.apiURL) else {
      throw ConfigError(variable: "APPLE_API_URL", problem: "must be an http(s) URL")
    }
    return NotificationHistoryClient(
      baseURL: url, key: key, bundleId: config.bundleId,
      timeout: .milliseconds(config.appleTimeoutMs))
  }

  /// The promotional offer signer when a key is configured; nil leaves offers off.
  static func offerSigner(_ config: AppConfig) throws -> PromotionalOfferSigner? {
    guard let (path, keyId, variable) = config.offerKey else { return nil }
    guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw ConfigError(variable: variable, problem: "cannot read \(path)")
    }
    guard let key = P256PrivateKey(pem: pem) else {
      throw ConfigError(
        variable: variable, problem: "\(path) holds no P-256 private key (a .p8 file)")
    }
    return PromotionalOfferSigner(key: key, keyId: keyId, bundleId: config.bundleId)
  }

  /// Migrates (unless disabled), loads the catalog, starts listening, serving and working.
  /// Returns the port the server is bound to.
  public func start() async throws -> Int {
    if config.migrateOnStart {
      // On the direct session when there is one: the run holds a session advisory lock.
      let applied = try await migrator.migrate(pools.direct)
      // Nothing else uses the direct pool: its session is not kept past start-up.
      if pools.direct !== database { await pools.direct.shutdown() }
      if !applied.isEmpty {
        logger.notice("migrations applied", ["names": .string(applied.joined(separator: ","))])
      }
    }
    try await catalog.reload()
    listener.start()
    let port = try server.start()
    if let adminServer {
      let adminPort = try adminServer.start()
      logger.notice(
        "admin API serving",
        ["host": .string(config.adminHost ?? config.host), "port": .int(adminPort)])
    }
    for loop in loops { loop.start() }
    logger.notice("storekeeper serving", ["host": .string(config.host), "port": .int(port)])
    return port
  }

  /// How long the workers get to finish their current run on shutdown, after the requests'
  /// own grace period.
  static let workerStopGracePeriod = Duration.seconds(10)

  /// Stops accepting, finishes in-flight requests (bounded), stops the workers (bounded),
  /// closes the pool.
  public func shutdown() async {
    logger.notice("shutting down")
    await server.shutdown()
    await adminServer?.shutdown()
    let (loops, webhookDispatcher) = (self.loops, self.webhookDispatcher)
    let stopped = await BoundedWait.finish(within: Self.workerStopGracePeriod) {
      for loop in loops { await loop.stop() }
      await webhookDispatcher.drain()
    }
    if !stopped {
      // A worker waits on a database that stopped answering. Exiting is safe: what it was
      // writing is rolled back with its session, and claimed work is taken up again when its
      // lease ends, here or on another instance.
      logger.warning(
        "background work did not stop in time (the database is not answering); exiting without it",
        ["grace_ms": .int(Int(Self.workerStopGracePeriod.components.seconds) * 1000)])
    }
    listener.stop()
    await pools.shutdown()
    logger.notice("stopped")
  }

  static func appStoreConfiguration(_ config: AppConfig, logger: Logger) throws
    -> AppStoreConfiguration
  {
    var appStore = AppStoreConfiguration(bundleId: config.bundleId)
    appStore.appAppleId = config.appAppleId
    appStore.allowedEnvironments = config.environments
    appStore.sharedSecret = config.sharedSecret
    appStore.receiptTimeout = .milliseconds(config.appleTimeoutMs)
    if let url = URL(string: config.verifyReceiptURL) { appStore.verifyReceiptURL = url }
    if let url = URL(string: config.verifyReceiptSandboxURL) {
      appStore.verifyReceiptSandboxURL = url
    }
    for path in config.rootCertificatePaths {
      guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw ConfigError(variable: "APPLE_ROOT_CERTS", problem: "cannot read \(path)")
      }
      appStore.extraRootCertificatesPEM.append(pem)
      logger.warning(
        "trusting an extra root certificate besides Apple's: use this only for tests and demos",
        ["path": .string(path)])
    }
    return appStore
  }

  /// The contract is served as it is in the repository; without it start-up stops.
  static func openAPI(_ config: AppConfig) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: config.openAPIPath), !data.isEmpty else {
      throw ConfigError(
        variable: "OPENAPI_PATH", problem: "names no readable file: \(config.openAPIPath)")
    }
    return Array(data)
  }
}

/// Lets settlement wake the notification loop, which is built after it.
final class LoopBox: Sendable {
  private let loop = Mutex<BackgroundLoop?>(nil)
  func set(_ value: BackgroundLoop) { loop.withLock { $0 = value } }
  func wake() { loop.withLock { $0 }?.wake() }
}
