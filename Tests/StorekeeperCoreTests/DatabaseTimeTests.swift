import Foundation
import Postgres
import StorekeeperLogging
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The time Storekeeper keeps is PostgreSQL's: a machine whose own clock is two hours ahead
/// still reads the database's time once it has read the database's clock.
@Suite(.database) struct DatabaseTimeTests {
  static let logger = Logger(label: "test", level: .critical)
  static let twoHours: TimeInterval = 7_200

  static func pool(_ url: String) -> PostgresPool {
    var configuration = PostgresConfiguration(url: url)
    configuration.maxConnections = 1
    // The full suite runs many suites at once on a small machine: a session may take a while.
    configuration.acquireTimeout = .seconds(30)
    return PostgresPool(configuration: configuration, logger: DomainHarness.logger)
  }

  /// PostgreSQL's clock now, between two readings of `time`.
  static func bracket(_ time: DatabaseTime, _ database: PostgresPool) async throws
    -> (before: Date, database: Date, after: Date)
  {
    let before = time.now
    let micros: Int64 = try #require(
      try await database.queryFirst(
        "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us")
    ).decode("us")
    let after = time.now
    return (before, Date(timeIntervalSince1970: Double(micros) / 1_000_000), after)
  }

  @Test func aMachineTwoHoursAheadKeepsPostgreSQLsTime() async throws {
    let database = Self.pool(try #require(DomainHarness.databaseURL))
    let time = DatabaseTime(logger: Self.logger) { Date().addingTimeInterval(Self.twoHours) }
    // Before its first reading it can only be this machine's clock.
    #expect(abs(time.now.timeIntervalSinceNow - Self.twoHours) < 1)

    let anchor = try await time.read(database)
    // Bounds far from the two hours it must not keep, and far above a reading's error on a
    // loaded machine (a round trip of seconds was seen): this is no timing.
    #expect(abs(anchor.offsetMs - 7_200_000) < 60_000)
    for _ in 0..<3 {
      let seen = try await Self.bracket(time, database)
      #expect(seen.before.addingTimeInterval(-60) <= seen.database)
      #expect(seen.database <= seen.after.addingTimeInterval(60))
      // It counts on between readings.
      try await Task.sleep(for: .milliseconds(300))
    }
    #expect(time.now > anchor.database)
    await database.shutdown()
  }

  @Test func aReadingThatFailsKeepsThePreviousOne() async throws {
    let database = Self.pool(try #require(DomainHarness.databaseURL))
    let time = DatabaseTime(logger: Self.logger) { Date().addingTimeInterval(Self.twoHours) }
    let anchor = try await time.read(database)
    // Port 1 on loopback: refused at once.
    let gone = Self.pool("postgresql://storekeeper@127.0.0.1:1/none")
    await time.refresh(gone)
    await gone.shutdown()
    #expect(time.anchor?.instant == anchor.instant)
    let seen = try await Self.bracket(time, database)
    #expect(seen.before.addingTimeInterval(-1) <= seen.database)
    #expect(seen.database <= seen.after.addingTimeInterval(1))
    await database.shutdown()
  }
}
