import Testing

@testable import Postgres

@Suite(.database) struct QueryCancellationTests {
  /// Cancelling the task that waits on a statement cancels the statement on the server, and
  /// the pool replaces the session instead of lending it again.
  @Test func cancellingTheTaskCancelsItsStatement() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, acquireTimeout: .seconds(30))
      let observer = db.makePool(maxConnections: 1)
      defer {
        Task {
          await pool.shutdown()
          await observer.shutdown()
        }
      }
      let sleeper = Task { try await pool.query("SELECT pg_sleep(60) AS slept") }
      // Cancel only once the server runs it: a cancel sent earlier would find nothing to stop.
      var running = false
      for _ in 0..<1500 where !running {
        running =
          try await observer.query(
            """
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'active'
              AND query LIKE 'SELECT pg_sleep(60)%'
            """
          ).first?.decode("n", as: Int.self) == 1
        if !running { try await Task.sleep(for: .milliseconds(20)) }
      }
      try #require(running, "the statement never started")
      sleeper.cancel()
      let error = await #expect(throws: PostgresError.self) { try await sleeper.value }
      #expect(error?.sqlState == PostgresError.queryCanceled)
      let one = try await pool.query("SELECT 1 AS one").first?.decode("one", as: Int.self)
      #expect(one == 1)
    }
  }

  /// A shielded pool's statements, in a transaction or not, run to their end when the task
  /// that waits on them is cancelled mid-statement (a group commit's flush holds other
  /// requests' orders), and the session stays in use.
  @Test func aShieldedStatementOutlivesItsTasksCancellation() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, acquireTimeout: .seconds(30))
      let observer = db.makePool(maxConnections: 1)
      defer {
        Task {
          await pool.shutdown()
          await observer.shutdown()
        }
      }
      for inTransaction in [false, true] {
        let marker = inTransaction ? "in_tx" : "alone"
        let sleeper = Task {
          let query = PostgresQuery(
            unsafeSQL: "SELECT pg_sleep(5), '\(marker)' AS marker, pg_backend_pid() AS pid")
          let rows =
            inTransaction
            ? try await pool.shielded.withTransaction { try await $0.query(query) }
            : try await pool.shielded.query(query)
          return try rows.first?.decode("pid", as: Int32.self)
        }
        var running = false
        for _ in 0..<1500 where !running {
          running =
            try await observer.query(
              """
              SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND state = 'active'
                AND query LIKE \("SELECT pg_sleep(5), '\(marker)'%")
              """
            ).first?.decode("n", as: Int.self) == 1
          if !running { try await Task.sleep(for: .milliseconds(20)) }
        }
        try #require(running, "the statement never started")
        sleeper.cancel()
        let pid = try #require(try await sleeper.value, "\(marker)")
        // The same session is lent again: it was not poisoned by a cancel.
        let next = try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode(
          "pid", as: Int32.self)
        #expect(next == pid, "\(marker)")
      }
    }
  }
}
