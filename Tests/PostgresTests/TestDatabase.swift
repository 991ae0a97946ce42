import Foundation
import StorekeeperLogging
import Testing

@testable import Postgres

/// A database of its own for one test, on the server `DATABASE_URL` points at, so tests run
/// in parallel without seeing each other's tables, locks or migrations.
struct TestDatabase {
  let name: String
  let url: String
  let adminURL: String

  static let logger = Logger(label: "postgres-tests", level: .warning)

  static func baseURL() throws -> String {
    try #require(
      ProcessInfo.processInfo.environment["DATABASE_URL"],
      "DATABASE_URL must point at a PostgreSQL server (scripts/test sets it)")
  }

  static func create() async throws -> TestDatabase {
    let base = try baseURL()
    let name =
      "pgtest_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    let admin = PostgresPool(configuration: PostgresConfiguration(url: base), logger: logger)
    try await admin.execute(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""))
    await admin.shutdown()
    return TestDatabase(
      name: String(name), url: replacingDatabase(in: base, with: String(name)), adminURL: base)
  }

  func makePool(
    maxConnections: Int = 10, acquireTimeout: Duration = .seconds(3),
    statementCacheCapacity: Int = 100
  ) -> PostgresPool {
    var configuration = PostgresConfiguration(url: url)
    configuration.maxConnections = maxConnections
    configuration.acquireTimeout = acquireTimeout
    configuration.statementCacheCapacity = statementCacheCapacity
    return PostgresPool(configuration: configuration, logger: Self.logger)
  }

  func drop() async {
    let admin = PostgresPool(
      configuration: PostgresConfiguration(url: adminURL), logger: Self.logger)
    _ = try? await admin.execute(
      PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)"))
    await admin.shutdown()
  }

  /// `postgresql://u@h:p/db?x=y` with another database name; a conninfo string gets a later
  /// `dbname=`, which libpq lets win.
  static func replacingDatabase(in url: String, with name: String) -> String {
    guard let scheme = url.range(of: "://") else { return url + " dbname=" + name }
    let rest = url[scheme.upperBound...]
    let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
    let authorityEnd = rest[..<queryStart].firstIndex(of: "/") ?? queryStart
    return String(url[..<authorityEnd]) + "/" + name + String(rest[queryStart...])
  }
}

/// Runs `body` with a fresh database and drops it afterwards, whatever happens.
func withTestDatabase<T>(_ body: (TestDatabase) async throws -> T) async throws -> T {
  let database = try await TestDatabase.create()
  do {
    let value = try await body(database)
    await database.drop()
    return value
  } catch {
    await database.drop()
    throw error
  }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `seconds`.
func eventually(seconds: Double = 15, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(20))
  }
  return condition()
}
