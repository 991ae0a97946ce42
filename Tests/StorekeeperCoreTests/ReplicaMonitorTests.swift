import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The measure against servers that are not a standby; a real streaming replica is measured by
/// tests/e2e/test_pooled_stack.py (replay paused, then caught up).
@Suite(.database) struct ReplicaMonitorTests {
  static func pool(_ url: String) -> PostgresPool {
    var configuration = PostgresConfiguration(url: url)
    configuration.maxConnections = 1
    // The full suite runs many suites at once on a small machine: a session may take a while.
    configuration.acquireTimeout = .seconds(30)
    return PostgresPool(configuration: configuration, logger: DomainHarness.logger)
  }

  @Test func aPrimaryGivenAsTheReplicaIsReportedAsNotAStandby() async throws {
    let url = try #require(ProcessInfo.processInfo.environment["DATABASE_URL"])
    let server = Self.pool(url)
    // Opened before measuring, so a slow connect under load is not read as "unreachable".
    _ = try await server.queryFirst("SELECT 1 AS one")
    let lag = await ReplicaMonitor(replica: server, primary: server).measure()
    await server.shutdown()
    #expect(lag.status == "not_a_standby")
    #expect(lag.bytes == 0 && lag.seconds == 0)
  }

  @Test func anUnreachableReplicaIsReportedNotThrown() async throws {
    let url = try #require(ProcessInfo.processInfo.environment["DATABASE_URL"])
    let primary = Self.pool(url)
    // Port 1 on loopback: refused at once.
    let replica = Self.pool("postgresql://storekeeper@127.0.0.1:1/none")
    let lag = await ReplicaMonitor(replica: replica, primary: primary).measure()
    await primary.shutdown()
    await replica.shutdown()
    #expect(lag.status == "unreachable")
    #expect(lag.bytes == nil && lag.seconds == nil)
  }
}
