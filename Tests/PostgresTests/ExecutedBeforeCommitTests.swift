import Testing

@testable import Postgres

/// `PostgresShieldedPool.query(_:whenExecuted:)`: the statement is reported as run before its
/// commit is done, and the call returns only once it is committed. A commit held up by a
/// deferred trigger waiting on a lock the test holds makes the two moments apart for as long
/// as the test likes.
@Suite(.database) struct ExecutedBeforeCommitTests {
  /// A deferred constraint trigger on `items` that runs `body` at commit.
  private func makeItems(_ pool: PostgresPool, atCommit body: String) async throws {
    try await pool.execute("CREATE TABLE items (id int PRIMARY KEY)")
    try await pool.execute(
      PostgresQuery(
        unsafeSQL: """
          CREATE FUNCTION at_commit() RETURNS trigger LANGUAGE plpgsql
          AS $$ BEGIN \(body); RETURN NULL; END $$
          """))
    try await pool.execute(
      """
      CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON items
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION at_commit()
      """)
  }

  private func count(_ pool: PostgresPool) async throws -> Int? {
    try await pool.query("SELECT count(*)::int AS n FROM items").first?.decode("n", as: Int.self)
  }

  @Test func reportsTheStatementBeforeItsCommitAndReturnsOnceCommitted() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, acquireTimeout: .seconds(30))
      let holder = db.makePool(maxConnections: 1)
      let observer = db.makePool(maxConnections: 1)
      defer {
        Task {
          await pool.shutdown()
          await holder.shutdown()
          await observer.shutdown()
        }
      }
      try await makeItems(pool, atCommit: "PERFORM pg_advisory_xact_lock(4242)")
      let executed = Recorder<Int>()
      let returned = Recorder<Int>()
      let insert = try await holder.withTransaction { tx in
        try await tx.execute("SELECT pg_advisory_xact_lock(4242)")
        let insert = Task {
          let rows = try await pool.shielded.query(
            "INSERT INTO items VALUES (1) RETURNING id", whenExecuted: { executed.append(1) })
          returned.append(1)
          return try rows.first?.decode("id", as: Int.self)
        }
        // The commit waits on the lock this transaction holds; the statement's rows were sent
        // before it, and the caller is told while the commit still waits.
        for _ in 0..<1500 where executed.count == 0 {
          try await Task.sleep(for: .milliseconds(20))
        }
        try #require(executed.count == 1, "the statement was not reported while its commit waited")
        #expect(returned.count == 0)
        #expect(try await count(observer) == 0)
        return insert
      }
      // The holder's commit released the lock: the insert commits, then returns its rows.
      #expect(try await insert.value == 1)
      #expect(executed.count == 1)
      #expect(try await count(observer) == 1)
    }
  }

  /// A commit that fails (here a deferred trigger's error) is the call's error, after the
  /// statement was reported; nothing is committed and the session is lent again.
  @Test func aFailedCommitThrowsTheServersErrorAndKeepsTheSession() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      try await makeItems(pool, atCommit: "RAISE EXCEPTION 'refused at commit'")
      let pid = try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode(
        "pid", as: Int32.self)
      let executed = Recorder<Int>()
      let error = await #expect(throws: PostgresError.self) {
        try await pool.shielded.query(
          "INSERT INTO items VALUES (1) RETURNING id", whenExecuted: { executed.append(1) })
      }
      #expect(error?.kind == .server)
      #expect(error?.message == "refused at commit")
      #expect(executed.count == 1)
      #expect(try await count(pool) == 0)
      let again = try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode(
        "pid", as: Int32.self)
      #expect(again == pid)
    }
  }

  /// A statement that fails is reported once and throws its error; the next one on the same
  /// session, through the same path, runs and commits. Without the statement cache (a
  /// transaction pooler) the statement goes the ordinary way and is reported all the same.
  @Test(arguments: [100, 0])
  func aFailedStatementThrowsItsErrorAndTheNextOneRuns(cache: Int) async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, statementCacheCapacity: cache)
      defer { Task { await pool.shutdown() } }
      try await makeItems(pool, atCommit: "NULL")
      let executed = Recorder<Int>()
      try await pool.shielded.query(
        "INSERT INTO items VALUES (1) RETURNING id", whenExecuted: { executed.append(1) })
      let error = await #expect(throws: PostgresError.self) {
        try await pool.shielded.query(
          "INSERT INTO items VALUES (1) RETURNING id", whenExecuted: { executed.append(2) })
      }
      #expect(error?.sqlState == PostgresError.uniqueViolation)
      let rows = try await pool.shielded.query(
        "INSERT INTO items VALUES (2) RETURNING id", whenExecuted: { executed.append(3) })
      #expect(try rows.first?.decode("id", as: Int.self) == 2)
      #expect(executed.all == [1, 2, 3])
      #expect(try await count(pool) == 2)
    }
  }
}
