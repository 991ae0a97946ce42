import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A change of several users locks every one of their sequences up front, in one order, so two
/// such changes wait instead of deadlocking, whatever the ids look like.
@Suite(.database) struct EventOutboxLockTests {
  @Test func canonicallyEqualIdsAreLockedAsTheTwoUsersTheyAre() async throws {
    try await DomainHarness.with { h in
      let users = ["jos\u{E9}", "jose\u{301}", "jos\u{E9}"]
      try await h.database.withTransaction { tx in
        try await h.orders.outbox.lock(users, on: tx)
      }
      let rows = try await h.database.query(
        """
        SELECT count(*)::int AS n FROM user_event_sequences
        WHERE user_id IN (\(users[0]), \(users[1]))
        """)
      let locked: Int = try rows[0].decode("n")
      #expect(locked == 2)
    }
  }
}
