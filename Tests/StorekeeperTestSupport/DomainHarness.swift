import AppStore
import FakeAppStore
import Foundation
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// The domain wired as `Application` wires it, on a migrated database of its own (on the server
/// `DATABASE_URL` names, which `scripts/test` starts), with Apple's place taken by a fake
/// certificate authority and the clock by one the test moves.
package struct DomainHarness: Sendable {
  /// The server the tests' databases are made on; without it the database suites are skipped
  /// (the `.database` trait).
  package static let databaseURL = ProcessInfo.processInfo.environment["DATABASE_URL"]
  package static var hasDatabase: Bool { databaseURL?.isEmpty == false }

  package struct NoDatabase: Error, CustomStringConvertible {
    package var description: String {
      "DATABASE_URL must point at a PostgreSQL server (scripts/test sets it)"
    }
  }

  package static let bundleId = "com.example.storekeeper"
  package static let logger = Logger(label: "domain-tests", level: .warning)

  package let name: String
  package let adminURL: String
  package let database: PostgresPool
  package let authority: FakeCertificateAuthority
  package let clock: ManualClock
  package let orders: OrderRepository
  package let reports: ReportStore
  package let settlement: SettlementService
  package let processor: ReportProcessor
  package let catalog: CatalogRepository
  package let entitlements: EntitlementRepository
  package let receipts: ReceiptService
  package let appleSettings: AppleConfigurationMonitor

  /// Runs `body` against a fresh database, dropped afterwards whatever happens.
  package static func with<T>(
    policy: RetryPolicy = RetryPolicy(baseMs: 30_000, windowMs: 72 * 3_600_000),
    apple transport: (any ReceiptTransport)? = nil,
    _ body: (DomainHarness) async throws -> T
  ) async throws -> T {
    let harness = try await make(policy: policy, transport: transport)
    do {
      let value = try await body(harness)
      await harness.drop()
      return value
    } catch {
      await harness.drop()
      throw error
    }
  }

  private static func make(policy: RetryPolicy, transport: (any ReceiptTransport)?)
    async throws -> DomainHarness
  {
    guard let base = databaseURL else { throw NoDatabase() }
    let name =
      "domain_"
      + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
      .prefix(16)
    let admin = PostgresPool(configuration: PostgresConfiguration(url: base), logger: logger)
    try await admin.execute(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""))
    await admin.shutdown()
    var poolConfiguration = PostgresConfiguration(
      url: replacingDatabase(in: base, with: String(name)))
    // Half a minute, not production's 3 s: under the whole suite on two cores a session can be
    // busy that long, and no test of this harness is about the wait (PostgresPoolTests are).
    poolConfiguration.acquireTimeout = .seconds(30)
    let database = PostgresPool(configuration: poolConfiguration, logger: logger)
    let migrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Migrations").path
    _ = try await Migrator(directory: migrations, logger: logger).migrate(database)

    let authority = try FakeCertificateAuthority()
    var configuration = AppStoreConfiguration(bundleId: bundleId)
    configuration.allowedEnvironments = ["Production", "Sandbox"]
    configuration.extraRootCertificatesPEM = [authority.rootCertificatePEM]
    // Nothing listens there: every verifyReceipt call fails at once, as when Apple is away.
    configuration.verifyReceiptURL = URL(string: "http://127.0.0.1:9/verifyReceipt")!
    configuration.verifyReceiptSandboxURL = configuration.verifyReceiptURL
    configuration.receiptTimeout = .seconds(2)
    let clock = ManualClock(Date())
    let appleSettings = AppleConfigurationMonitor(logger: logger, clock: clock.clock)
    let verifier = ProofVerifier(
      signed: try SignedDataVerifier(configuration: configuration),
      appReceipts: try AppReceiptSignatureVerifier(configuration: configuration),
      receipts: transport.map {
        ReceiptVerifier(configuration: configuration, transport: $0, logger: logger)
      } ?? ReceiptVerifier(configuration: configuration, logger: logger),
      appleSettings: appleSettings)
    let orders = OrderRepository(database: database, outbox: EventOutbox(clock: clock.clock))
    let reports = ReportStore(
      database: database, leaseMs: 60_000, policy: policy, clock: clock.clock)
    let settlement = SettlementService(database: database, orders: orders, reports: reports) {}
    let catalog = CatalogRepository(database: database)
    let entitlements = EntitlementRepository(database: database, clock: clock.clock)
    return DomainHarness(
      name: String(name), adminURL: base, database: database, authority: authority, clock: clock,
      orders: orders, reports: reports, settlement: settlement,
      processor: ReportProcessor(
        orders: orders, reports: reports, verifier: verifier, settlement: settlement),
      catalog: catalog, entitlements: entitlements,
      receipts: ReceiptService(
        orders: orders, reports: reports, verifier: verifier, settlement: settlement,
        catalog: catalog, entitlements: entitlements),
      appleSettings: appleSettings)
  }

  private func drop() async {
    await database.shutdown()
    let admin = PostgresPool(
      configuration: PostgresConfiguration(url: adminURL), logger: Self.logger)
    _ = try? await admin.execute(
      PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)"))
    await admin.shutdown()
  }

  private static func replacingDatabase(in url: String, with name: String) -> String {
    guard let scheme = url.range(of: "://") else { return url + " dbname=" + name }
    let rest = url[scheme.upperBound...]
    let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
    let authorityEnd = rest[..<queryStart].firstIndex(of: "/") ?? queryStart
    return String(url[..<authorityEnd]) + "/" + name + String(rest[queryStart...])
  }

  // MARK: fixtures

  /// A consumable granting `gold` per unit.
  package func addConsumable(_ productId: String = "gold.100", gold: Int = 100) async throws {
    try await database.execute(
      """
      INSERT INTO products (product_id, type, title, description, price, currency, sort_order,
                            active, grants, content)
      VALUES (\(productId), 'consumable', 'Gold', '', 0.99, 'USD', 1, true,
              jsonb_build_object('balance', jsonb_build_object('gold', \(gold)::int)), '{}')
      """)
  }

  package func newOrder(user: String = "alice", product: String = "gold.100", quantity: Int32 = 1)
    async throws -> Order
  {
    guard
      case .created(let order) = try await orders.create(
        userId: user, productId: product, quantity: quantity, ttlSeconds: 3600, on: database)
    else { throw HarnessError.orderNotCreated }
    return order
  }

  /// What Apple would record for a purchase of `order`'s product.
  package func transaction(
    for order: Order, id: String = UUID().uuidString, token: String? = nil,
    productId: String? = nil, quantity: Int? = nil
  ) -> VerifiedTransaction {
    VerifiedTransaction(
      transactionId: id, originalTransactionId: id, bundleId: Self.bundleId,
      productId: productId ?? order.productId, quantity: quantity ?? Int(order.quantity),
      purchaseDate: Int64(Date().timeIntervalSince1970 * 1000),
      appAccountToken: token ?? order.appAccountToken, environment: "Production",
      type: "Consumable")
  }

  /// The same purchase as StoreKit 2 hands it to the app: a JWS signed by the fake CA.
  package func signed(_ transaction: VerifiedTransaction) throws -> String {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    return try authority.sign(
      JWSTransactionDecodedPayload(
        transactionId: transaction.transactionId,
        originalTransactionId: transaction.originalTransactionId, webOrderLineItemId: nil,
        bundleId: transaction.bundleId, productId: transaction.productId,
        purchaseDate: transaction.purchaseDate, originalPurchaseDate: transaction.purchaseDate,
        expiresDate: transaction.expiresDate,
        quantity: transaction.quantity, type: transaction.type,
        appAccountToken: transaction.appAccountToken, inAppOwnershipType: "PURCHASED",
        signedDate: now, environment: transaction.environment, storefront: "USA",
        storefrontId: "143441", transactionReason: "PURCHASE", currency: "USD", price: 990))
  }

  package func gold(_ user: String) async throws -> Int64 {
    try await entitlements.view(userId: user).balances["gold"] ?? 0
  }

  package func product(_ id: String = "gold.100") async throws -> Product {
    guard let product = try await catalog.product(id) else { throw HarnessError.noProduct }
    return product
  }

  package func events(_ tradeNo: String) async throws -> [String] {
    try await orders.events(tradeNo).map { $0.reason ?? "" }
  }

  package enum HarnessError: Error {
    case orderNotCreated
    case noProduct
  }
}
