import AppStore
import Foundation
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLogging

/// Everything Storekeeper reads from its environment (DESIGN §7), checked once at start-up.
public struct AppConfig: Sendable {
  public var databaseURL: String
  public var host = "127.0.0.1"
  public var port = 8080
  public var eventLoops = ProcessInfo.processInfo.activeProcessorCount
  /// `MAX_CONNECTIONS`: open HTTP connections per listener; at it the longest-idle one is
  /// closed for a new client, and 503 comes only when every one is busy.
  public var maxConnections = 10_000
  public var databasePoolSize = 10
  public var statementCacheSize = 100
  /// `DATABASE_DIRECT_URL`, `DATABASE_READ_URL`, `DB_POOL_MODE`, `DB_READ_POOL_SIZE`: see
  /// `AppConfig+Database.swift`.
  public var databaseDirectURL: String?
  public var databaseReadURL: String?
  public var databasePoolMode = DatabasePoolMode.session
  public var databaseReadPoolSize = 5
  /// `ADMIN_TOKENS`: see `AdminToken` for the syntax.
  public var adminTokens: [AdminToken] = []
  /// `METRICS_TOKEN`: a bearer token that reads `/metrics` only (Prometheus's `authorization`).
  public var metricsToken: AdminToken?
  /// `METRICS_REFRESH_INTERVAL`: how often the gauges read from PostgreSQL are recomputed; a
  /// scrape only reads them from memory.
  public var metricsRefreshIntervalMs: Int64 = 30_000
  /// `ADMIN_HOST`, `ADMIN_PORT`: with a port, the admin API and `/metrics` are served on a
  /// listener of their own (the host defaults to `host`) and are 404 on the public one.
  public var adminHost: String?
  public var adminPort: Int?
  /// `ADMIN_AUTH_FAILURE_LIMIT` wrong admin tokens from one client address within
  /// `ADMIN_AUTH_FAILURE_WINDOW` refuse that address (429) until the window has passed.
  public var adminAuthFailureLimit = 10
  public var adminAuthFailureWindowMs: Int64 = 60_000
  public var bundleId: String
  public var appAppleId: Int64?
  /// Apple's spelling: "Production", "Sandbox".
  public var environments: Set<String> = ["Production"]
  /// `SANDBOX_POLICY`: whether sandbox purchases (App Review, TestFlight) credit balances
  /// (`credit`, the default) or are only settled and recorded (`record_only`).
  public var sandboxCredits = true
  /// `REFUND_POLICY`: what a refund does about what was already spent.
  package var refundPolicy: RefundPolicy = .debt
  public var rootCertificatePaths: [String] = []
  public var verifyReceiptURL = "https://buy.itunes.apple.com/verifyReceipt"
  public var verifyReceiptSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"
  public var sharedSecret: String?
  public var appleTimeoutMs: Int64 = 10_000
  /// The App Store Server API key (`.p8` file, key id, issuer id): with it, notifications Apple
  /// failed to deliver are fetched from its notification history. Off without one.
  public var apiKeyPath: String?
  public var apiKeyId: String?
  public var apiIssuerId: String?
  /// `APPLE_API_URL`: Apple's recommended production host (the older
  /// `api.storekit.itunes.apple.com` still answers, and the variable may name it).
  public var apiURL = "https://api.storekit.apple.com"
  /// `APPLE_API_SANDBOX_URL`: asked for transactions and subscriptions production does not know.
  public var apiSandboxURL = "https://api.storekit-sandbox.apple.com"
  /// `APPLE_RECEIPT_VERIFICATION`: see `ReceiptVerificationMode`.
  public var receiptVerification = ReceiptVerificationMode.auto
  /// `RECEIPT_APPLE_CALL_LIMIT`: App Store Server API calls one receipt may cost.
  public var receiptAppleCallLimit = ServerAPIReceiptVerifier.defaultCallLimit
  /// `XML_PRODUCT_ID_PREFIX`: the App Store id of a product in the XML answers is this + `nid`.
  public var xmlProductIdPrefix = ""
  /// `APPLE_OFFER_KEY_FILE`, `APPLE_OFFER_KEY_ID`: the in-app purchase key that signs
  /// promotional offers, when it is not the App Store Server API key above (which signs them
  /// otherwise). Offers are off with neither.
  public var offerKeyPath: String?
  public var offerKeyId: String?
  /// `OFFER_ELIGIBILITY`: who may have a promotional offer signed.
  var offerEligibility = OfferEligibility.subscribers
  public var notificationRecoveryIntervalMs: Int64 = 3_600_000
  /// `RECONCILE_*`: comparing subscriptions with Apple.
  var reconcile = ReconcileSettings()
  public var orderTTLSeconds = 24 * 3600
  public var sweepIntervalMs: Int64 = 30_000
  /// `CHARTS_ROLLUP_INTERVAL`: how often the charts' hourly rollup is rebuilt (docs/CHARTS.md).
  public var chartsRollupIntervalMs: Int64 = 600_000
  /// `CHARTS_TIME_ZONE`: the zone whose days, weeks and months `payers` and `cohorts` are
  /// counted ahead in (docs/CHARTS.md); charts asked in another zone count when asked.
  public var chartsTimeZone = "UTC"
  public var retryBaseMs: Int64 = 30_000
  public var retryWindowMs: Int64 = 72 * 3_600_000
  public var logLevel = LogLevel.info
  /// `RATE_LIMIT_PER_ADDRESS`: every app and admin route, per client address; generous, since
  /// many users can share one address behind a carrier's NAT. nil: off.
  var rateLimitPerAddress: RateSpec? = RateSpec(perSecond: 50, burst: 500)
  /// `RATE_LIMIT_PER_USER`: creating orders and posting receipts, per user. nil: off.
  var rateLimitPerUser: RateSpec? = RateSpec(perSecond: 0.5, burst: 10)
  /// `PROOF_BYTES_PER_USER`: what one user's reports and receipts may carry, in bytes (each
  /// post at least `RateLimiter.minimumProofCost`). nil: off.
  var proofBytesPerUser: RateSpec? = RateSpec(perSecond: 16_000_000 / 3600, burst: 16_000_000)
  /// `RATE_LIMIT_MAX_KEYS`: buckets kept per kind (address, user) before idle ones are dropped.
  var rateLimitMaxKeys = 100_000
  /// `TRUSTED_PROXIES`: peers whose `X-Forwarded-For` names the client.
  var trustedProxies: [IPNetwork] = []
  /// `VERIFY_CONCURRENCY`: signed transactions verified at once (CPU-bound).
  var verifyConcurrency = 2 * ProcessInfo.processInfo.activeProcessorCount
  /// `VERIFY_RECEIPT_CONCURRENCY`: receipts being checked with Apple at once (network-bound).
  var verifyReceiptConcurrency = 8
  /// `GOOGLE_PLAY_CONCURRENCY`: calls to Google Play's Developer API at once for reports and
  /// restores (network-bound), apart from Apple's so neither store's slowness takes the other's.
  var googlePlayConcurrency = 8
  /// `VERIFY_QUEUE_LENGTH`: proofs that may wait for a signature check before 503 (0: none).
  var verifyQueueLength = 1024
  /// `VERIFY_QUEUE_TIMEOUT`: how long a proof waits for a signature check before 503.
  var verifyQueueTimeoutMs: Int64 = 5_000
  /// `MAX_OPEN_ORDERS_PER_USER`: unpaid orders one user may hold.
  var maxOpenOrdersPerUser = 20
  /// `ORDER_BATCH_MAX`: most order creations written in one statement (1: each on its own).
  var orderBatchMax = 64
  /// `ORDER_BATCH_FLUSHES`: batches of orders being written at once.
  var orderBatchFlushes = 2
  /// `ORDER_QUEUE_TIMEOUT`: how long an order waits for a batch to take it before 503.
  var orderQueueTimeoutMs: Int64 = 5_000
  /// `PROOF_RETENTION`: how long a proof is kept after its last report is settled or refused.
  var proofRetentionMs: Int64 = 30 * 24 * 3_600_000
  public var migrationsDirectory = "Migrations"
  public var openAPIPath = "openapi.yaml"
  /// `CONSOLE_DIR`: the admin console's files, read once at start-up and served at `/admin/`.
  public var consoleDirectory = "Console"
  public var migrateOnStart = true
  /// `APP_AUTH`: how apps prove who the user is. Required from the environment; `.none` only
  /// for configurations built in code (tests).
  public var appAuth = AppAuthSettings.none
  /// `RECEIPTS_WITHOUT_SIGN_IN`: receipt posts without credentials are served as userless
  /// posts under `APP_AUTH=jwt` and `api_key` (seed 000's app has no sign-in).
  public var receiptsWithoutSignIn = false
  /// `ALLOW_INSECURE_URLS=1`: plain http for Apple's and the JWKS URLs (tests and the demo).
  public var allowInsecureURLs = false
  /// `WEBHOOK_*`: webhook delivery (see `WebhookSettings`).
  var webhooks = WebhookSettings()
  /// `CONSUMPTION_REFUND_PREFERENCE`, `CONSUMPTION_SAMPLE_CONTENT_PROVIDED`.
  var consumption = ConsumptionPolicy()
  /// `CONSUMPTION_RETRY_BASE`: the first wait before a consumption answer is sent again.
  var consumptionRetryBaseMs: Int64 = 30_000
  /// `GOOGLE_PLAY_*`: Google Play as a second store; nil (off) without a package name.
  var googlePlay: GooglePlaySettings?

  public init(databaseURL: String, bundleId: String) {
    self.databaseURL = databaseURL
    self.bundleId = bundleId
  }

  public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment)
    throws -> AppConfig
  {
    let reader = ConfigReader(env: env)
    guard let url = try reader.databaseURL("DATABASE_URL") else {
      throw ConfigError(variable: "DATABASE_URL", problem: "is required but not set")
    }
    var config = AppConfig(databaseURL: url, bundleId: try reader.requiredText("APPLE_BUNDLE_ID"))
    switch env["ALLOW_INSECURE_URLS"] ?? "" {
    case "", "0": config.allowInsecureURLs = false
    case "1": config.allowInsecureURLs = true
    default: throw ConfigError(variable: "ALLOW_INSECURE_URLS", problem: "must be 0 or 1")
    }
    config.appAuth = try parseAppAuth(env, allowInsecureURLs: config.allowInsecureURLs)
    config.receiptsWithoutSignIn = try parseReceiptsWithoutSignIn(env)
    if let host = env["HOST"], !host.isEmpty {
      try Self.requireAddress(host, "HOST")
      config.host = host
    }
    config.port = try reader.integer("PORT", 0...65535) ?? config.port
    config.eventLoops = try reader.integer("EVENT_LOOPS", 1...256) ?? config.eventLoops
    config.maxConnections =
      try reader.integer("MAX_CONNECTIONS", 1...1_000_000) ?? config.maxConnections
    config.databasePoolSize = try reader.integer("DB_POOL_SIZE", 1...500) ?? config.databasePoolSize
    config.statementCacheSize =
      try reader.integer("DB_STATEMENT_CACHE_SIZE", 0...10_000) ?? config.statementCacheSize
    try readDatabase(env, into: &config)
    config.adminTokens = try AdminToken.parseList(env["ADMIN_TOKENS"] ?? "")
    if let host = env["ADMIN_HOST"], !host.isEmpty {
      try Self.requireAddress(host, "ADMIN_HOST")
      config.adminHost = host
    }
    config.adminPort = try reader.integer("ADMIN_PORT", 0...65535)
    if config.adminHost != nil, config.adminPort == nil {
      throw ConfigError(variable: "ADMIN_PORT", problem: "is required when ADMIN_HOST is set")
    }
    if let adminPort = config.adminPort, adminPort != 0, adminPort == config.port,
      Self.addressesOverlap(config.adminHost ?? config.host, config.host)
    {
      throw ConfigError(
        variable: "ADMIN_PORT",
        problem: "must differ from PORT on the same host (a wildcard address is every host)")
    }
    config.adminAuthFailureLimit =
      try reader.integer("ADMIN_AUTH_FAILURE_LIMIT", 1...1_000_000) ?? config.adminAuthFailureLimit
    config.adminAuthFailureWindowMs =
      try reader.duration("ADMIN_AUTH_FAILURE_WINDOW") ?? config.adminAuthFailureWindowMs
    if let id = env["APPLE_APP_APPLE_ID"], !id.isEmpty {
      guard let value = Int64(id), value > 0 else {
        throw ConfigError(variable: "APPLE_APP_APPLE_ID", problem: "must be a positive integer")
      }
      config.appAppleId = value
    }
    if let list = env["APPLE_ENVIRONMENTS"], !list.isEmpty {
      var environments: Set<String> = []
      for name in list.split(separator: ",").map({
        $0.trimmingCharacters(in: .whitespaces).lowercased()
      }) {
        switch name {
        case "production": environments.insert("Production")
        case "sandbox": environments.insert("Sandbox")
        default:
          throw ConfigError(
            variable: "APPLE_ENVIRONMENTS",
            problem: "allows only production and sandbox, got \"\(name)\"")
        }
      }
      // "," names nothing: every purchase and notification would be refused.
      guard !environments.isEmpty else {
        throw ConfigError(
          variable: "APPLE_ENVIRONMENTS", problem: "names no environment (production, sandbox)")
      }
      config.environments = environments
    }
    // A production notification is checked against the app's Apple id as Apple advises; a
    // server that accepts production without one would skip that check silently.
    if config.environments.contains("Production"), config.appAppleId == nil {
      throw ConfigError(
        variable: "APPLE_APP_APPLE_ID",
        problem: "is required while APPLE_ENVIRONMENTS allows production")
    }
    switch env["SANDBOX_POLICY"] ?? "" {
    case "", "credit": config.sandboxCredits = true
    case "record_only": config.sandboxCredits = false
    case let other:
      throw ConfigError(
        variable: "SANDBOX_POLICY", problem: "must be credit or record_only, got \"\(other)\"")
    }
    switch env["REFUND_POLICY"] ?? "" {
    case "", "debt": config.refundPolicy = .debt
    case "negative": config.refundPolicy = .negative
    case let other:
      throw ConfigError(
        variable: "REFUND_POLICY", problem: "must be debt or negative, got \"\(other)\"")
    }
    if let paths = env["APPLE_ROOT_CERTS"], !paths.isEmpty {
      config.rootCertificatePaths = paths.split(separator: ",").map { String($0) }
    }
    for (name, keyPath) in [
      ("APPLE_VERIFY_RECEIPT_URL", \AppConfig.verifyReceiptURL),
      ("APPLE_VERIFY_RECEIPT_SANDBOX_URL", \AppConfig.verifyReceiptSandboxURL),
    ] {
      guard let value = env[name], !value.isEmpty else { continue }
      try checkURL(name, value, allowInsecure: config.allowInsecureURLs)
      config[keyPath: keyPath] = value
    }
    config.sharedSecret = try reader.text("APPLE_SHARED_SECRET")
    let apiNames = ["APPLE_API_KEY_FILE", "APPLE_API_KEY_ID", "APPLE_API_ISSUER_ID"]
    let apiValues = [
      reader.value("APPLE_API_KEY_FILE"), try reader.text("APPLE_API_KEY_ID"),
      try reader.text("APPLE_API_ISSUER_ID"),
    ]
    if apiValues.contains(where: { $0 != nil }) {
      if let missing = apiNames.indices.first(where: { apiValues[$0] == nil }) {
        throw ConfigError(
          variable: apiNames[missing],
          problem: "is required with the other APPLE_API_* settings (or set none of them)")
      }
      (config.apiKeyPath, config.apiKeyId, config.apiIssuerId) =
        (apiValues[0], apiValues[1], apiValues[2])
    }
    try readOfferKey(env, into: &config)
    if let value = env["APPLE_API_URL"], !value.isEmpty {
      try checkURL("APPLE_API_URL", value, allowInsecure: config.allowInsecureURLs)
      config.apiURL = value
    }
    try readReceiptVerification(env, into: &config)
    try readXMLProductIdPrefix(env, into: &config)
    if let interval = try reader.duration("NOTIFICATION_RECOVERY_INTERVAL") {
      // Recovery reads Apple's notification history through the Server API: without the key
      // the worker is not built, and the setting would be ignored without a word.
      guard config.apiKeyPath != nil else {
        throw ConfigError(
          variable: "NOTIFICATION_RECOVERY_INTERVAL",
          problem:
            "needs the App Store Server API key (APPLE_API_KEY_FILE, _ID, APPLE_API_ISSUER_ID)")
      }
      config.notificationRecoveryIntervalMs = interval
    }
    config.appleTimeoutMs = try reader.duration("APPLE_TIMEOUT") ?? config.appleTimeoutMs
    if let ttl = try reader.duration("ORDER_TTL") {
      // Orders store whole seconds: 1500ms would silently be 1 s.
      guard ttl >= 1000, ttl % 1000 == 0 else {
        throw ConfigError(variable: "ORDER_TTL", problem: "must be whole seconds, at least 1s")
      }
      config.orderTTLSeconds = Int(ttl / 1000)
    }
    config.sweepIntervalMs = try reader.duration("SWEEP_INTERVAL") ?? config.sweepIntervalMs
    config.chartsRollupIntervalMs =
      try reader.duration("CHARTS_ROLLUP_INTERVAL") ?? config.chartsRollupIntervalMs
    config.chartsTimeZone = try reader.timeZone("CHARTS_TIME_ZONE") ?? config.chartsTimeZone
    config.retryBaseMs = try reader.duration("REPORT_RETRY_BASE") ?? config.retryBaseMs
    config.retryWindowMs = try reader.duration("REPORT_RETRY_WINDOW") ?? config.retryWindowMs
    // A window shorter than the first wait gives every report waiting on a store up at its
    // first failure: a minute's outage would lose purchases for good.
    guard config.retryWindowMs >= config.retryBaseMs else {
      throw ConfigError(
        variable: "REPORT_RETRY_WINDOW", problem: "must be at least REPORT_RETRY_BASE")
    }
    try readLimits(env, into: &config)
    try readReconcile(env, into: &config)
    try readWebhooks(env, into: &config)
    try readConsumption(env, into: &config)
    try readOfferEligibility(env, into: &config)
    try readGooglePlay(env, into: &config)
    try readMetrics(env, into: &config)
    try readOrderBatching(env, into: &config)
    config.proofRetentionMs = try reader.duration("PROOF_RETENTION") ?? config.proofRetentionMs
    if let level = env["LOG_LEVEL"], !level.isEmpty {
      guard let parsed = LogLevel(name: level) else {
        throw ConfigError(
          variable: "LOG_LEVEL",
          problem: "must be one of debug, info, notice, warning, error, critical")
      }
      config.logLevel = parsed
    }
    // Unset, each is looked for beside the executable, then in /usr/share/storekeeper, then
    // in the working directory (ResourceLocator).
    let resources = ResourceLocator()
    if let named = reader.value("MIGRATIONS_DIR") {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: named, isDirectory: &isDirectory),
        isDirectory.boolValue
      else { throw ConfigError(variable: "MIGRATIONS_DIR", problem: "is not a directory") }
    }
    config.migrationsDirectory = reader.value("MIGRATIONS_DIR") ?? resources.locate("Migrations")
    // Found nowhere, or a directory without a single migration (its parent, say): start-up went
    // on to fail later with exit 1, which the unit restarts every 2 s, naming no variable.
    let migrations = try? FileManager.default.contentsOfDirectory(
      atPath: config.migrationsDirectory)
    guard
      migrations?.contains(where: { $0.hasSuffix(".sql") && $0.prefix(4).allSatisfy(\.isNumber) })
        == true
    else {
      throw ConfigError(
        variable: "MIGRATIONS_DIR",
        problem: reader.value("MIGRATIONS_DIR") == nil
          ? "is unset, and no Migrations directory was found beside the executable, in /usr/share/storekeeper or in the working directory"
          : "names a directory holding no NNNN_name.sql migration")
    }
    config.openAPIPath = reader.value("OPENAPI_PATH") ?? resources.locate("openapi.yaml")
    config.consoleDirectory = reader.value("CONSOLE_DIR") ?? resources.locate("Console")
    return config
  }

  /// Whether two listeners on one port take it from each other: the same address, or a
  /// wildcard (`0.0.0.0`, `::`) beside any address of its family; `::` takes IPv4 too, as
  /// Linux binds it by default. Otherwise the second listen failed after start-up, exit 1.
  static func addressesOverlap(_ a: String, _ b: String) -> Bool {
    func parse(_ host: String) -> (v6: Bool, bytes: [UInt8])? {
      var v4 = in_addr()
      var v6 = in6_addr()
      if inet_pton(AF_INET, host, &v4) == 1 {
        return (false, withUnsafeBytes(of: &v4) { Array($0) })
      }
      if inet_pton(AF_INET6, host, &v6) == 1 {
        return (true, withUnsafeBytes(of: &v6) { Array($0) })
      }
      return nil
    }
    guard let x = parse(a), let y = parse(b) else { return a == b }
    let (xAny, yAny) = (x.bytes.allSatisfy { $0 == 0 }, y.bytes.allSatisfy { $0 == 0 })
    if x.v6 == y.v6 { return x.bytes == y.bytes || xAny || yAny }
    return (x.v6 && xAny) || (y.v6 && yAny)
  }

  /// The listeners bind addresses, not names: `localhost` failed at listen, naming no variable.
  static func requireAddress(_ host: String, _ variable: String) throws {
    var v4 = in_addr()
    var v6 = in6_addr()
    guard inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 else {
      throw ConfigError(
        variable: variable, problem: "must be an IP address (127.0.0.1, 0.0.0.0, ::1, ::)")
    }
  }
}
