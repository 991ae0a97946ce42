import Foundation
import GooglePlay
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// Google Play's part of the domain, built when `GOOGLE_PLAY_PACKAGE_NAME` is set: the
/// service account key (read at start-up, so a wrong file stops the server naming the
/// variable), the cached access tokens, the Developer API client.
struct GooglePlayParts: Sendable {
  let client: GooglePlayClient
  let monitor: GooglePlayMonitor
  let verifier: GooglePurchaseVerifier
  let acknowledgements: GoogleAcknowledgementQueue
  let settlement: GoogleSettlement
  let notifications: GoogleNotificationService
  /// Reads each order's price from the Orders API once it is credited.
  let prices: GoogleOrderPrices
  /// Checks Pub/Sub's OIDC tokens; nil without GOOGLE_PUBSUB_AUDIENCE and
  /// GOOGLE_PUBSUB_SERVICE_ACCOUNT (then pushes are refused, 503).
  let pushVerifier: PushTokenVerifier?
  /// What notifications missed (voided purchases, subscriptions), every
  /// `GOOGLE_PLAY_SWEEP_INTERVAL`; `/metrics` reads the voids it could match to no purchase.
  let sweeps: GoogleSweeps
  let sweepIntervalMs: Int64

  static func make(
    _ settings: GooglePlaySettings, config: AppConfig, domain parts: DomainParts,
    logger: Logger, wake: @escaping @Sendable () -> Void,
    wakeReports: @escaping @Sendable () -> Void
  ) throws -> GooglePlayParts {
    let key: ServiceAccountKey
    do {
      key = try ServiceAccountKey(contentsOf: settings.serviceAccountFile)
    } catch {
      throw ConfigError(variable: "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE", problem: "\(error)")
    }
    guard let baseURL = URL(string: settings.apiURL) else {
      throw ConfigError(variable: "GOOGLE_PLAY_API_URL", problem: "is not a URL")
    }
    let timeout = Duration.milliseconds(settings.timeoutMs)
    let transport = HTTPGooglePlayTransport()
    let client = GooglePlayClient(
      packageName: settings.packageName,
      tokens: AccessTokenSource(key: key, transport: transport, timeout: timeout),
      baseURL: baseURL, transport: transport, timeout: timeout)
    let monitor = GooglePlayMonitor(
      logger: logger.with("component", "google-play"), clock: parts.clock)
    let verifier = GooglePurchaseVerifier(client: client, monitor: monitor)
    let acknowledgements = GoogleAcknowledgementQueue(
      database: parts.database, clock: parts.clock, baseMs: config.retryBaseMs,
      leaseMs: max(60_000, 3 * settings.timeoutMs))
    let store = GoogleNotificationStore(
      database: parts.database, clock: parts.clock, baseMs: config.retryBaseMs,
      leaseMs: max(60_000, 3 * settings.timeoutMs))
    func notifications(settling settlement: GoogleSettlement) -> GoogleNotificationService {
      GoogleNotificationService(
        store: store, orders: parts.orders, catalog: parts.catalog, client: client,
        monitor: monitor, settlement: settlement, clock: parts.clock,
        logger: logger.with("component", "google-notifications"),
        refundPolicy: config.refundPolicy, wakeReports: wakeReports)
    }
    func settlement(readBack: @escaping @Sendable (String) async -> Void) -> GoogleSettlement {
      GoogleSettlement(
        database: parts.database, orders: parts.orders, reports: parts.reports,
        verifier: verifier, catalog: parts.catalog, entitlements: parts.entitlements,
        sandboxCredits: config.sandboxCredits, credited: wake, readBack: readBack)
    }
    // Each needs the other: a push for a purchase never reported settles it as a report does,
    // and a restore applies what Google said as a push does. Reading a known subscription back
    // never settles a new purchase, so the restore's reader holds a settlement without one.
    let reader = notifications(settling: settlement(readBack: { _ in }))
    let settlement = settlement(readBack: reader.readBack)
    let notifications = notifications(settling: settlement)
    let prices = GoogleOrderPrices(
      database: parts.database, client: client, monitor: monitor, clock: parts.clock,
      baseMs: config.retryBaseMs, leaseMs: max(60_000, 3 * settings.timeoutMs),
      logger: logger.with("component", "google-prices"))
    var pushVerifier: PushTokenVerifier?
    if let audience = settings.pubSubAudience, let email = settings.pubSubServiceAccount {
      guard let jwks = URL(string: settings.oidcJWKSURL) else {
        throw ConfigError(variable: "GOOGLE_OIDC_JWKS_URL", problem: "is not a URL")
      }
      pushVerifier = PushTokenVerifier(
        settings: .init(audience: audience, serviceAccountEmail: email),
        keys: PushKeySource(
          fetcher: HTTPPushKeyFetcher(url: jwks),
          logger: logger.with("component", "google-push-keys")))
    } else {
      logger.warning(
        "Google Play pushes are refused: set GOOGLE_PUBSUB_AUDIENCE and GOOGLE_PUBSUB_SERVICE_ACCOUNT to take them"
      )
    }
    logger.notice(
      "Google Play is on",
      [
        "package_name": .string(settings.packageName),
        "service_account": .string(key.clientEmail), "api_url": .string(settings.apiURL),
      ])
    return GooglePlayParts(
      client: client, monitor: monitor, verifier: verifier, acknowledgements: acknowledgements,
      settlement: settlement, notifications: notifications, prices: prices,
      pushVerifier: pushVerifier,
      sweeps: GoogleSweeps(
        notifications: notifications, intervalMs: settings.sweepIntervalMs,
        logger: logger.with("component", "google-sweeps")),
      sweepIntervalMs: settings.sweepIntervalMs)
  }

  /// What `make` needs of the domain built before it.
  struct DomainParts {
    var database: PostgresPool
    var clock: WallClock
    var orders: OrderRepository
    var reports: ReportStore
    var catalog: CatalogRepository
    var entitlements: EntitlementRepository
  }
}
