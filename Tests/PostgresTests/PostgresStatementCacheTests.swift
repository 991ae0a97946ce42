import Testing

@testable import Postgres

@Suite(.database) struct PostgresStatementCacheTests {
  @Test func namesNewStatementsAndEvictsTheLeastRecentlyUsed() {
    var cache = PostgresStatementCache(capacity: 2)
    let a = cache.lookup("SELECT 'a'")
    #expect(!a.isPrepared && a.evicted == nil)
    cache.didPrepare("SELECT 'a'", as: a.name)
    let b = cache.lookup("SELECT 'b'")
    cache.didPrepare("SELECT 'b'", as: b.name)
    #expect(a.name != b.name)
    // Using a again makes b the oldest.
    #expect(cache.lookup("SELECT 'a'").isPrepared)
    let c = cache.lookup("SELECT 'c'")
    #expect(c.evicted == b.name)
    cache.didPrepare("SELECT 'c'", as: c.name)
    #expect(cache.count == 2)
    #expect(!cache.lookup("SELECT 'b'").isPrepared)
  }

  @Test func aStatementThatFailedToPrepareIsNotCached() {
    var cache = PostgresStatementCache(capacity: 4)
    let first = cache.lookup("SELEC oops")
    let second = cache.lookup("SELEC oops")
    #expect(!second.isPrepared && second.name != first.name)
    #expect(cache.count == 0)
  }

  /// The session's prepared statements, seen by the server (not counting this query's own).
  static func prepared(_ pool: PostgresPool) async throws -> [String] {
    try await pool.query(
      "SELECT statement FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%' ORDER BY prepare_time"
    ).map { try $0.decode("statement") }
  }

  @Test func theServerKeepsTheMostRecentStatementsUpToTheCapacity() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, statementCacheCapacity: 3)
      defer { Task { await pool.shutdown() } }
      // Five different texts, each run three times with different values.
      for round in 0..<3 {
        for n in 0..<5 {
          let query = PostgresQuery(
            unsafeSQL: "SELECT $1::int AS v, \(n) AS n", binds: [String(round)])
          let value = try await pool.query(query)
          #expect(try value.first?.decode("v", as: Int.self) == round)
          #expect(try value.first?.decode("n", as: Int.self) == n)
        }
      }
      // The listing is a statement too: it takes a slot, evicting the oldest of the three.
      let statements = try await Self.prepared(pool)
      #expect(statements == ["SELECT $1::int AS v, 3 AS n", "SELECT $1::int AS v, 4 AS n"])
    }
  }

  @Test func withNoCapacityNothingIsPrepared() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, statementCacheCapacity: 0)
      defer { Task { await pool.shutdown() } }
      for n in 0..<3 { try await pool.execute("SELECT \(n)") }
      #expect(try await Self.prepared(pool).isEmpty)
    }
  }

  @Test func aTableThatChangesShapeIsReadAfreshOutsideATransaction() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE shapes (a int)")
      try await pool.execute("INSERT INTO shapes VALUES (\(1))")
      let before = try await pool.query("SELECT * FROM shapes")
      #expect(try before.first?.decode("a", as: Int.self) == 1)
      try await pool.execute("ALTER TABLE shapes ADD COLUMN b text DEFAULT 'new'")
      let after = try await pool.query("SELECT * FROM shapes")
      #expect(try after.first?.decode("b", as: String.self) == "new")
    }
  }

  @Test func insideATransactionTheChangeFailsOnceThenWorks() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE shapes (a int)")
      _ = try await pool.query("SELECT * FROM shapes")
      try await pool.execute("ALTER TABLE shapes ADD COLUMN b int")
      let error = await #expect(throws: PostgresError.self) {
        try await pool.withTransaction { tx in _ = try await tx.query("SELECT * FROM shapes") }
      }
      #expect(error?.sqlState == PostgresError.featureNotSupported)
      let rows = try await pool.withTransaction { tx in
        try await tx.query("SELECT * FROM shapes")
      }
      #expect(rows.isEmpty)
    }
  }
}
