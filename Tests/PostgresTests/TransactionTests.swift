import Testing

@testable import Postgres

private struct Boom: Error {}

@Suite(.database) struct TransactionTests {
  func count(_ pool: PostgresPool) async throws -> Int {
    try #require(try await pool.query("SELECT count(*) AS n FROM items").first).decode("n")
  }

  @Test func commitsWhenTheBodyReturns() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      let inserted = try await pool.withTransaction { tx in
        try await tx.execute("INSERT INTO items VALUES (\("a"))")
        return try await tx.execute("INSERT INTO items VALUES (\("b"))")
      }
      #expect(inserted == 1)
      #expect(try await count(pool) == 2)
    }
  }

  @Test func rollsBackWhenTheBodyThrows() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      let pid: Int = try #require(try await pool.query("SELECT pg_backend_pid() AS pid").first)
        .decode("pid")
      await #expect(throws: Boom.self) {
        try await pool.withTransaction { tx in
          try await tx.execute("INSERT INTO items VALUES (\("a"))")
          throw Boom()
        }
      }
      #expect(try await count(pool) == 0)
      // The session was rolled back to idle, so the pool kept it (it drops one left in a
      // transaction).
      #expect(
        try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode("pid", as: Int.self)
          == pid)
    }
  }

  /// With prepared statements, the first statement of a transaction is prepared before the
  /// BEGIN it carries is sent: one refused at prepare (an unknown column) ran nothing, and the
  /// transaction must still begin with the next one, or what follows autocommits.
  @Test func aStatementRefusedAtPrepareLeavesTheTransactionToTheNext() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, statementCacheCapacity: 100)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      var refused = false
      do {
        try await pool.withTransaction { tx in
          do {
            try await tx.execute("INSERT INTO items (nope) VALUES (\("a"))")
          } catch is PostgresError {
            refused = true
          }
          try await tx.execute("INSERT INTO items VALUES (\("b"))")
          throw Boom()
        }
      } catch is Boom {}
      #expect(refused)
      #expect(try await count(pool) == 0)
    }
  }

  @Test func rollsBackOnADatabaseErrorAndKeepsIt() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      let error = try await #require(throws: PostgresError.self) {
        try await pool.withTransaction { tx in
          try await tx.execute("INSERT INTO items VALUES (\("a"))")
          try await tx.execute("INSERT INTO items VALUES (\("a"))")
        }
      }
      #expect(error.sqlState == PostgresError.uniqueViolation)
      #expect(try await count(pool) == 0)
    }
  }

  @Test func aSwallowedStatementErrorDoesNotBecomeASilentCommit() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      let error = try await #require(throws: PostgresError.self) {
        try await pool.withTransaction { tx in
          try await tx.execute("INSERT INTO items VALUES (\("a"))")
          _ = try? await tx.execute("INSERT INTO items VALUES (\("a"))")
        }
      }
      #expect(error.sqlState == "25P02")
      #expect(try await count(pool) == 0)
    }
  }

  @Test(arguments: [100, 0])
  func theBeginTravelsWithTheFirstStatementAndEveryStatementIsInside(cache: Int) async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(statementCacheCapacity: cache)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      let before = pool.roundTrips.count
      let ids: [Int] = try await pool.withTransaction { tx in
        var ids: [Int] = []
        for name in ["a", "b"] {
          let row = try #require(
            try await tx.query(
              "INSERT INTO items VALUES (\(name)) RETURNING txid_current() AS id"
            ).first)
          ids.append(try row.decode("id"))
        }
        return ids
      }
      // Two statements and the COMMIT: no round trip of the BEGIN's own.
      #expect(pool.roundTrips.count - before == 3)
      // One transaction id for both: the first statement ran after the BEGIN, not before it.
      #expect(ids.count == 2 && ids[0] == ids[1])
      await #expect(throws: Boom.self) {
        try await pool.withTransaction { tx in
          try await tx.execute("INSERT INTO items VALUES (\("c"))")
          throw Boom()
        }
      }
      #expect(try await count(pool) == 2)
    }
  }

  @Test(arguments: [100, 0])
  func aFailedFirstStatementIsItsOwnErrorAndTheSessionIsKept(cache: Int) async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, statementCacheCapacity: cache)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      try await pool.execute("INSERT INTO items VALUES (\("a"))")
      let pid: Int = try #require(try await pool.query("SELECT pg_backend_pid() AS pid").first)
        .decode("pid")
      let error = try await #require(throws: PostgresError.self) {
        try await pool.withTransaction { tx in
          try await tx.execute("INSERT INTO items VALUES (\("a"))")
        }
      }
      #expect(error.sqlState == PostgresError.uniqueViolation)
      let nul = try await #require(throws: PostgresError.self) {
        try await pool.withTransaction { tx in
          try await tx.execute("INSERT INTO items VALUES (\("b\u{0}"))")
        }
      }
      #expect(nul.sqlState == PostgresError.characterNotInRepertoire)
      // A NUL refused before sending leaves the BEGIN to the next statement, which is inside.
      await #expect(throws: Boom.self) {
        try await pool.withTransaction { tx in
          _ = try? await tx.execute("INSERT INTO items VALUES (\("b\u{0}"))")
          try await tx.execute("INSERT INTO items VALUES (\("d"))")
          throw Boom()
        }
      }
      // Rolled back to idle each time, so the one session is still the pool's, and usable.
      _ = try await pool.withTransaction { tx in
        try await tx.execute("INSERT INTO items VALUES (\("c"))")
      }
      #expect(try await count(pool) == 2)
      #expect(
        try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode("pid", as: Int.self)
          == pid)
    }
  }

  @Test func aBodyThatSendsNothingCostsNoRoundTrip() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE items (name text PRIMARY KEY)")
      let before = pool.roundTrips.count
      let value = try await pool.withTransaction { _ in 42 }
      await #expect(throws: Boom.self) {
        let _: Int = try await pool.withTransaction { _ in throw Boom() }
      }
      #expect(value == 42)
      #expect(pool.roundTrips.count == before)
      // The next statement on the session commits on its own: had a BEGIN been left pending,
      // it would have opened a transaction that the pool drops, uncommitted, with the session.
      try await pool.execute("INSERT INTO items VALUES (\("a"))")
      #expect(try await count(pool) == 1)
    }
  }

  @Test func aTransactionCannotBeUsedAfterItEnds() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let escaped = try await pool.withTransaction { tx in tx }
      let error = try await #require(throws: PostgresError.self) {
        try await escaped.query("SELECT 1")
      }
      #expect(error.kind == .closed)
    }
  }

  @Test func notifyInsideATransactionIsSentAtCommitOnly() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let received = Recorder<String>()
      let connected = Gate()
      let listener = PostgresListener(
        url: db.url, channels: ["tx_events"], logger: TestDatabase.logger,
        onNotification: { _, payload in received.append(payload) }, onConnect: { connected.open() })
      listener.start()
      defer { listener.stop() }
      await connected.wait()
      await #expect(throws: Boom.self) {
        try await pool.withTransaction { tx in
          try await tx.notify(channel: "tx_events", payload: "rolled back")
          throw Boom()
        }
      }
      try await pool.withTransaction { tx in
        try await tx.notify(channel: "tx_events", payload: "committed")
      }
      #expect(await eventually { received.count >= 1 })
      #expect(received.all == ["committed"])
    }
  }
}
