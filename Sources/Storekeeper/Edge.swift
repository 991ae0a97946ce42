import AppAuth
import HTTP
import Postgres
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLogging

/// The API (StorekeeperAPI) over the domain: the served catalog, the routes on the public
/// listener and, with `ADMIN_PORT`, the admin surface on one of its own.
struct Edge: Sendable {
  let catalog: ServedCatalog
  /// Refreshed by a worker, read by each scrape of `/metrics`.
  let metricsSnapshot: MetricsSnapshot
  /// The routes with their handlers: served by `server`, and callable in-process by tests.
  let router: Router
  /// The admin listener's routes, when it has its own.
  let adminRouter: Router?
  let server: HTTPServer
  /// The admin listener (`ADMIN_PORT`), serving the admin API and `/metrics` apart from the
  /// public port; nil when both are served on the public port.
  let adminServer: HTTPServer?
  /// The app sign-in service's key set (`APP_JWT_JWKS_URL`), fetched once at start-up.
  let appJWKS: JWKSKeySource?

  init(config: AppConfig, domain: Domain, migrator: Migrator, logger: Logger) throws {
    let (database, pools) = (domain.database, domain.pools)
    let catalog = try ServedCatalog(
      repository: domain.catalog, logger: logger.with("component", "catalog"),
      xmlProductIdPrefix: config.xmlProductIdPrefix)
    self.catalog = catalog
    let appAuth = try AppAuthenticator(
      config.appAuth, receiptsWithoutSignIn: config.receiptsWithoutSignIn,
      logger: logger.with("component", "auth"))
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
    let googleHealth = domain.google.map {
      GooglePlayHealth(
        monitor: $0.monitor, queue: $0.acknowledgements, prices: $0.prices, sweeps: $0.sweeps,
        clock: domain.clock)
    }
    let appJWKS = appAuth.jwks.map { AppJWKSHealth(source: $0) }
    self.appJWKS = appAuth.jwks
    OperationsRoutes(
      database: database, migrator: migrator, openAPI: try Application.openAPI(config),
      appleSettings: domain.appleSettings,
      replica: pools.replica.map { ReplicaMonitor(replica: $0, primary: database) },
      google: googleHealth, appJWKS: appJWKS
    ).register(&router)
    CatalogRoutes(cache: catalog).register(&router)
    let userFacts = UserFactsReader(database: database, clock: domain.clock)
    OfferingRoutes(
      cache: catalog, auth: appAuth, facts: userFacts, exposures: domain.exposures,
      clock: domain.clock
    ).register(&router)
    let requestMetrics = RequestMetrics()
    let orderBatches = OrderGroupCommit(
      database: database, orders: domain.orders, idempotency: domain.idempotency,
      ttlSeconds: config.orderTTLSeconds, maxOpen: config.maxOpenOrdersPerUser,
      maxBatch: config.orderBatchMax, maxFlushes: config.orderBatchFlushes,
      queueTimeout: .milliseconds(config.orderQueueTimeoutMs),
      logger: logger.with("component", "orders"))
    OrderRoutes(
      database: database, orders: domain.orders, idempotency: domain.idempotency,
      ttlSeconds: config.orderTTLSeconds, auth: appAuth, groupCommit: orderBatches,
      googlePlay: domain.google != nil,
      offerings: (catalog, OrderOfferingRepository(database: database), userFacts)
    ).register(&router)
    SettlementRoutes(
      processor: domain.processor, receipts: domain.receipts, auth: appAuth,
      xmlProductIdPrefix: config.xmlProductIdPrefix
    ).register(&router)
    EntitlementRoutes(repository: domain.entitlements, auth: appAuth).register(&router)
    WalletRoutes(
      wallet: WalletService(database: database, outbox: domain.orders.outbox), auth: appAuth
    ).register(&router)
    ConsumptionConsentRoutes(
      answers: ConsumptionAnswers(database: database, outbox: domain.orders.outbox), auth: appAuth
    ).register(&router)
    let offerSigner = try Application.offerSigner(config)
    if let offerSigner {
      logger.notice("promotional offers are signed", ["key_id": .string(offerSigner.keyId)])
    } else {
      logger.notice(
        "promotional offers are off: set APPLE_OFFER_KEY_FILE and APPLE_OFFER_KEY_ID (or the APPLE_API_KEY_* settings) to sign them"
      )
    }
    OfferRoutes(
      signer: offerSigner, catalog: catalog, auth: appAuth, clock: domain.clock,
      eligibility: config.offerEligibility, sandboxCounts: config.sandboxCredits,
      database: database
    ).register(&router)
    let notificationsPending = domain.notificationsPending
    let webhooksPending = domain.webhooksPending
    let notificationRoutes = NotificationRoutes(
      service: domain.notifications, auth: auth, wake: { notificationsPending.wake() },
      listings: NotificationListing(database: pools.reads))
    notificationRoutes.register(&router)
    let googlePushes = domain.googleNotificationsPending
    GoogleNotificationRoutes(
      receiver: domain.google.map {
        GooglePushReceiver(
          verifier: $0.pushVerifier, service: $0.notifications,
          logger: logger.with("component", "google-push"))
      }, wake: { googlePushes.wake() }
    ).register(&router)

    let console = ConsoleAssets.load(
      directory: config.consoleDirectory, logger: logger.with("component", "console"))
    let webhookMetrics = WebhookMetrics(database: database, attempts: domain.webhookAttempts)
    let metricsSnapshot = MetricsSnapshot(
      sources: [
        OrderCountMetrics(database: database),
        StateCountMetrics(database: database, webhooks: webhookMetrics),
      ], logger: logger.with("component", "metrics"))
    self.metricsSnapshot = metricsSnapshot
    // The admin surface: the admin API and /metrics, on the public listener or on its own.
    func registerAdmin(_ router: inout APIRouter) {
      MetricsRoutes(
        auth: auth, snapshot: metricsSnapshot,
        stored: StoredStateMetrics(database: database),
        catalog: catalog, requests: requestMetrics,
        appleSettings: domain.appleSettings, pools: pools, webhooks: webhookMetrics,
        receiptCalls: domain.verifier.serverAPI?.metrics, verification: domain.gate,
        google: googleHealth, orderBatches: orderBatches, appJWKS: appJWKS
      )
      .register(&router)
      AdminProductRoutes(auth: auth, repository: domain.catalog, cache: catalog)
        .register(&router)
      AdminStorefrontPriceRoutes(auth: auth, repository: domain.catalog, cache: catalog)
        .register(&router)
      AdminOfferingRoutes(
        auth: auth, repository: OfferingRepository(database: database), cache: catalog
      ).register(&router)
      AdminExperimentRoutes(
        auth: auth,
        repository: ExperimentRepository(database: database, outbox: domain.orders.outbox),
        cache: catalog, exposures: domain.exposures
      ).register(&router)
      AdminOrderRoutes(
        auth: auth, orders: domain.orders, database: database,
        listings: OrderRepository(database: pools.reads, outbox: domain.orders.outbox)
      ).register(&router)
      AdminTransactionRoutes(
        auth: auth,
        transfers: TransferService(
          settlement: domain.settlement, catalog: domain.catalog,
          google: domain.google?.settlement),
        history: UserHistory(database: pools.reads)
      ).register(&router)
      notificationRoutes.registerAdmin(&router)
      AdminAuditRoutes(auth: auth, audit: AuditLog(database: pools.reads)).register(&router)
      AdminReconcileRoutes(auth: auth, repairs: ReconcileRepairLog(database: pools.reads))
        .register(&router)
      EventRoutes(auth: auth, feed: EventFeed(database: pools.reads)).register(&router)
      AdminWebhookRoutes(
        auth: auth, store: WebhookStore(database: database, settings: config.webhooks),
        log: WebhookDeliveryLog(database: database), entitlements: domain.entitlements,
        allowInsecureURLs: config.allowInsecureURLs, wake: { webhooksPending.wake() }
      ).register(&router)
      AdminConsoleRoutes(auth: auth, database: pools.reads).register(&router)
      AdminChartRoutes(auth: auth, charts: ChartRepository(database: pools.reads))
        .register(&router)
      AdminExportRoutes(auth: auth, exporter: Exporter(database: pools.reads)).register(&router)
      AdminCurrencyRateRoutes(auth: auth, rates: CurrencyRates(database: database))
        .register(&router)
      AdminUserRoutes(
        auth: auth, entitlements: domain.entitlements,
        adjustments: ManualAdjustments(database: database, outbox: domain.orders.outbox),
        history: UserHistory(database: database)
      ).register(&router)
      if let console { ConsoleRoutes(assets: console).register(&router) }
    }
    var serverConfig = ServerConfiguration()
    serverConfig.host = config.host
    serverConfig.port = config.port
    serverConfig.eventLoopCount = config.eventLoops
    serverConfig.maxConnections = config.maxConnections
    serverConfig.sharedFieldNames = OfferingRoutes.appHeaders
    if let adminPort = config.adminPort {
      // The same per-address limits as the app port: the failure limiter never refuses a right
      // token, so these bound how fast tokens can be guessed here.
      var admin = APIRouter(logger: logger.with("component", "http-admin"), limiter: limiter)
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
  }
}
