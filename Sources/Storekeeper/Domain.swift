import AppStore
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// The domain (StorekeeperCore) as the configuration makes it, built first: the database pools,
/// the repositories and services, and the signals by which it wakes the workers built after it.
struct Domain: Sendable {
  let pools: DatabasePools
  var database: PostgresPool { pools.primary }
  /// PostgreSQL's clock, read at start-up and again every 30 s: the time every instance keeps.
  let time: DatabaseTime
  var clock: WallClock { time.clock }
  let catalog: CatalogRepository
  let orders: OrderRepository
  let idempotency: IdempotencyStore
  let reports: ReportStore
  let settlement: SettlementService
  let entitlements: EntitlementRepository
  let verifier: ProofVerifier
  let appleSettings: AppleConfigurationMonitor
  let gate: VerificationGate
  let processor: ReportProcessor
  let receipts: ReceiptService
  let notifications: NotificationService
  /// The deliveries due to the webhook endpoints, and the attempts made at them.
  let webhookQueue: WebhookQueue
  let webhookAttempts = WebhookAttemptCounts()
  /// Wake the notification worker (a notification was stored) and the webhook worker (a
  /// delivery was queued or finished).
  let notificationsPending = WorkSignal()
  let webhooksPending = WorkSignal()
  /// Experiment exposures served and not yet written, and the wake-up of their writer.
  let exposures: ExposureRecorder
  let exposuresPending = WorkSignal()
  /// Google Play, when `GOOGLE_PLAY_PACKAGE_NAME` is set; its acknowledgement worker is woken
  /// by each credit.
  let google: GooglePlayParts?
  let acknowledgementsPending = WorkSignal()
  /// Wakes the Google notification worker (a push was stored) and the report retry worker (a
  /// push made a waiting report due).
  let googleNotificationsPending = WorkSignal()
  let reportsDue = WorkSignal()

  init(config: AppConfig, logger: Logger) throws {
    pools = DatabasePools(config: config, logger: logger)
    let database = pools.primary
    let time = DatabaseTime(logger: logger.with("component", "time"))
    self.time = time
    let clock = time.clock
    catalog = CatalogRepository(database: database)

    let appStore = try Application.appStoreConfiguration(config, logger: logger)
    appleSettings = AppleConfigurationMonitor(
      logger: logger.with("component", "verify-receipt"), clock: clock)
    let signed: SignedDataVerifier
    let appReceipts: AppReceiptSignatureVerifier
    do {
      signed = try SignedDataVerifier(
        configuration: appStore, logger: logger.with("component", "verify-signed"))
      appReceipts = try AppReceiptSignatureVerifier(configuration: appStore)
    } catch AppStoreConfigurationError.invalidRootCertificate(let index)
      where config.rootCertificatePaths.indices.contains(index)
    {
      throw ConfigError(
        variable: "APPLE_ROOT_CERTS",
        problem: "\(config.rootCertificatePaths[index]) holds no readable PEM certificate")
    }
    var verifier = ProofVerifier(
      signed: signed,
      appReceipts: appReceipts,
      receipts: ReceiptVerifier(
        configuration: appStore, logger: logger.with("component", "verify-receipt")),
      appleSettings: appleSettings)
    verifier.serverAPI = try Application.serverAPIReceiptVerifier(
      config, signed: verifier.signed, logger: logger)
    verifier.serverAPIOnly = config.receiptVerification == .serverAPI
    self.verifier = verifier

    orders = OrderRepository(database: database, outbox: EventOutbox(clock: clock))
    let exposuresPending = exposuresPending
    exposures = ExposureRecorder(database: database, outbox: orders.outbox) {
      exposuresPending.wake()
    }
    idempotency = IdempotencyStore(database: database)
    reports = ReportStore(
      database: database, leaseMs: max(60_000, 3 * config.appleTimeoutMs),
      policy: RetryPolicy(baseMs: config.retryBaseMs, windowMs: config.retryWindowMs), clock: clock,
      retentionMs: config.proofRetentionMs)
    let notificationsPending = notificationsPending
    var settlement = SettlementService(database: database, orders: orders, reports: reports) {
      notificationsPending.wake()
    }
    settlement.sandboxCredits = config.sandboxCredits
    settlement.refundPolicy = config.refundPolicy
    // With the App Store Server API key, workers bind purchases made outside the app to the
    // user they are assigned to (Set App Account Token) and answer consumption requests.
    let serverAPI = try Application.serverAPIKey(config) != nil
    settlement.bindsAccountTokens = serverAPI
    settlement.answersConsumption = serverAPI
    self.settlement = settlement
    entitlements = EntitlementRepository(database: database, clock: clock)
    webhookQueue = WebhookQueue(database: database, settings: config.webhooks, clock: clock)
    gate = VerificationGate(
      cpu: config.verifyConcurrency, apple: config.verifyReceiptConcurrency,
      google: config.googlePlayConcurrency, queueLength: config.verifyQueueLength,
      queueTimeout: .milliseconds(config.verifyQueueTimeoutMs))
    let acknowledgementsPending = acknowledgementsPending
    let reportsDue = reportsDue
    if let settings = config.googlePlay {
      let parts = GooglePlayParts.DomainParts(
        database: database, clock: clock, orders: orders, reports: reports, catalog: catalog,
        entitlements: entitlements)
      google = try GooglePlayParts.make(
        settings, config: config, domain: parts, logger: logger,
        wake: { acknowledgementsPending.wake() }, wakeReports: { reportsDue.wake() })
    } else {
      google = nil
    }
    let receipts = ReceiptService(
      orders: orders, reports: reports, verifier: verifier, settlement: settlement,
      catalog: catalog, entitlements: entitlements, gate: gate)
    self.receipts = receipts
    var processor = ReportProcessor(
      orders: orders, reports: reports, verifier: verifier, settlement: settlement, gate: gate)
    processor.google = google?.settlement
    processor.receipts = receipts
    self.processor = processor
    notifications = NotificationService(
      database: database, verifier: verifier.signed, settlement: settlement,
      catalog: catalog, clock: clock, logger: logger.with("component", "notifications"))
  }
}
