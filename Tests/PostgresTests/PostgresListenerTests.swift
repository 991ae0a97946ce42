import Testing

@testable import Postgres

@Suite(.database) struct PostgresListenerTests {
  @Test func deliversNotificationsOnTheChannelsItListensTo() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let received = Recorder<String>()
      let connects = Recorder<Bool>()
      // A name that needs quoting proves LISTEN quotes the identifier.
      let odd = #"Chan-"quoted" ü"#
      let listener = PostgresListener(
        url: db.url, channels: ["catalog", odd], logger: TestDatabase.logger,
        onNotification: { channel, payload in received.append(channel + "|" + payload) },
        onConnect: { connects.append(true) })
      listener.start()
      defer { listener.stop() }
      #expect(await eventually { connects.count == 1 })
      try await pool.notify(channel: "elsewhere", payload: "not for us")
      try await pool.notify(channel: "catalog", payload: "reload 'it' ✓")
      try await pool.notify(channel: odd, payload: "")
      #expect(await eventually { received.count >= 2 })
      #expect(received.all == ["catalog|reload 'it' ✓", odd + "|"])
    }
  }

  @Test func stopEndsTheSession() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let connects = Recorder<Bool>()
      let listener = PostgresListener(
        url: db.url, channels: ["catalog"], logger: TestDatabase.logger,
        onNotification: { _, _ in }, onConnect: { connects.append(true) })
      listener.start()
      #expect(await eventually { connects.count == 1 })
      func listening() async throws -> Int {
        try #require(
          try await pool.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = \(db.name) AND query LIKE 'LISTEN%'"
          ).first
        ).decode("n")
      }
      #expect(try await listening() == 1)
      listener.stop()
      var remaining = 1
      let deadline = ContinuousClock.now + .seconds(30)
      while remaining > 0, ContinuousClock.now < deadline {
        remaining = try await listening()
        if remaining > 0 { try await Task.sleep(for: .milliseconds(20)) }
      }
      #expect(remaining == 0)
    }
  }

  /// The check that a transaction pooler did not hand the listener a shared server connection
  /// (DATABASE_DIRECT_URL naming one): never raised against PostgreSQL itself. The pooler's side
  /// is tested end to end, through PgBouncer (tests/e2e/test_pooled_stack.py).
  @Test func aSessionOfItsOwnOnPostgreSQLItselfShowsNoSignOfBeingShared() async throws {
    try await withTestDatabase { db in
      let parameters = try PostgresConnectionParameters(url: db.url, connectTimeoutSeconds: 2)
      let connection = try PostgresConnection.connectBlocking(
        parameters, logger: TestDatabase.logger)
      for _ in 0..<5 {
        #expect(
          try PostgresListener.sharedSessionEvidence(
            connection, parameters, logger: TestDatabase.logger) == nil)
      }
    }
  }

  @Test func reconnectsAfterItsSessionIsKilledAndCallsOnConnectAgain() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let received = Recorder<String>()
      let connects = Recorder<Bool>()
      let listener = PostgresListener(
        url: db.url, channels: ["catalog"], logger: TestDatabase.logger,
        onNotification: { _, payload in received.append(payload) },
        onConnect: { connects.append(true) })
      listener.start()
      defer { listener.stop() }
      #expect(await eventually { connects.count == 1 })
      try await pool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(db.name) AND query LIKE 'LISTEN%'"
      )
      #expect(await eventually { connects.count == 2 })
      try await pool.notify(channel: "catalog", payload: "after reconnect")
      #expect(await eventually { received.count == 1 })
      #expect(received.all == ["after reconnect"])
    }
  }
}
