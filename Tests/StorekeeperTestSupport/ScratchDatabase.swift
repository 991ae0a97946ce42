import Foundation
import Postgres
import StorekeeperLogging

/// An empty database of its own on the server `DATABASE_URL` names, dropped by `drop()`, so
/// suites run in parallel without seeing each other's rows.
package struct ScratchDatabase: Sendable {
  package let name: String
  /// The scratch database's URL.
  package let url: String
  /// The server's own (`DATABASE_URL`), where the scratch database is created and dropped.
  package let adminURL: String

  private static let logger = Logger(label: "scratch-database", level: .warning)

  package static func create(prefix: String) async throws -> ScratchDatabase {
    guard let base = DomainHarness.databaseURL else { throw DomainHarness.NoDatabase() }
    let name =
      prefix + "_"
      + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    let admin = PostgresPool(configuration: PostgresConfiguration(url: base), logger: logger)
    try await admin.execute(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""))
    await admin.shutdown()
    return ScratchDatabase(name: name, url: replacingDatabase(in: base, with: name), adminURL: base)
  }

  package func drop() async {
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
}
