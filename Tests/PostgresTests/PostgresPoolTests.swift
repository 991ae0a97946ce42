import Foundation
import Testing

@testable import Postgres

@Suite(.database) struct PostgresPoolTests {
  /// Takes the pool's only session inside a transaction and keeps it until `release` opens.
  static func holdTheOnlySession(of pool: PostgresPool) async -> (
    release: Gate, holder: Task<Void, any Error>
  ) {
    let release = Gate()
    let held = Gate()
    let holder = Task {
      try await pool.withTransaction { _ in
        held.open()
        await release.wait()
      }
    }
    await held.wait()
    return (release, holder)
  }

  @Test func neverOpensMoreSessionsThanTheBound() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 2, acquireTimeout: .seconds(30))
      defer { Task { await pool.shutdown() } }
      let pids = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<12 {
          group.addTask {
            try #require(
              try await pool.query("SELECT pg_backend_pid() AS pid, pg_sleep(0.02)").first
            ).decode("pid")
          }
        }
        return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
      }
      #expect(pids.count <= 2)
      #expect(!pids.isEmpty)
    }
  }

  @Test func theCallerBeyondTheBoundWaitsForAFreeSession() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 2, acquireTimeout: .seconds(30))
      defer { Task { await pool.shutdown() } }
      let release = Gate()
      let holding = Recorder<Int>()
      let holders = (0..<2).map { i in
        Task {
          try await pool.withTransaction { tx in
            try await tx.execute("SELECT 1")
            holding.append(i)
            await release.wait()
          }
        }
      }
      #expect(await eventually { holding.count == 2 })
      let third = Task {
        try await pool.query("SELECT 'third' AS v").first?.decode("v", as: String.self)
      }
      let finished = Recorder<Bool>()
      let watcher = Task {
        _ = try? await third.value
        finished.append(true)
      }
      try await Task.sleep(for: .milliseconds(200))
      #expect(finished.count == 0, "the third caller must wait while both sessions are held")
      // Exactly two sessions of this database are open on the server.
      let admin = PostgresPool(
        configuration: PostgresConfiguration(url: db.adminURL), logger: TestDatabase.logger)
      let open = try await admin.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = \(db.name)")
      await admin.shutdown()
      #expect(try open.first?.decode("n", as: Int.self) == 2)
      release.open()
      #expect(try await third.value == "third")
      for holder in holders { try await holder.value }
      await watcher.value
    }
  }

  @Test func acquireTimesOutWithPoolTimeout() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, acquireTimeout: .milliseconds(200))
      defer { Task { await pool.shutdown() } }
      let (release, holder) = await Self.holdTheOnlySession(of: pool)
      let error = try await #require(throws: PostgresError.self) {
        try await pool.query("SELECT 1")
      }
      #expect(error.kind == .poolTimeout)
      #expect(error.isUnavailable)
      release.open()
      try await holder.value
      // The timed-out waiter left the queue; the session is free again.
      #expect(try await pool.query("SELECT 1 AS v").first?.decode("v", as: Int.self) == 1)
    }
  }

  @Test func aShortWaitEndsOnTimeBehindALongOne() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, acquireTimeout: .seconds(30))
      defer { Task { await pool.shutdown() } }
      let (release, holder) = await Self.holdTheOnlySession(of: pool)
      let long = Task { try await pool.query("SELECT 1 AS v").first?.decode("v", as: Int.self) }
      #expect(await eventually { pool.waiterCount == 1 })
      // Queued after a 30 s wait: its own 200 ms end it, not the sweep due for the first.
      let error = try await #require(throws: PostgresError.self) {
        try await pool.withConnection(acquireTimeout: .milliseconds(200)) { _ in 0 }
      }
      #expect(error.kind == .poolTimeout)
      #expect(pool.waiterCount == 1)
      release.open()
      try await holder.value
      #expect(try await long.value == 1)
      // Waits come and go after the sweeps; each still ends on its own deadline.
      let (again, second) = await Self.holdTheOnlySession(of: pool)
      for _ in 0..<3 {
        await #expect(throws: PostgresError.self) {
          try await pool.withConnection(acquireTimeout: .milliseconds(50)) { _ in 0 }
        }
      }
      #expect(pool.waiterCount == 0)
      again.open()
      try await second.value
    }
  }

  @Test func waitersAreServedInArrivalOrder() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1, acquireTimeout: .seconds(30))
      defer { Task { await pool.shutdown() } }
      let (release, holder) = await Self.holdTheOnlySession(of: pool)
      let order = Recorder<Int>()
      var waiters: [Task<Void, any Error>] = []
      for i in 0..<4 {
        waiters.append(
          Task {
            try await pool.query("SELECT 1")
            order.append(i)
          })
        // Each waiter is queued before the next one arrives.
        #expect(await eventually { pool.waiterCount == i + 1 })
      }
      release.open()
      try await holder.value
      for waiter in waiters { try await waiter.value }
      #expect(order.all == [0, 1, 2, 3])
    }
  }

  @Test func aBrokenSessionIsReplacedTransparently() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      let first: Int = try #require(try await pool.query("SELECT pg_backend_pid() AS pid").first)
        .decode("pid")
      let admin = PostgresPool(
        configuration: PostgresConfiguration(url: db.adminURL), logger: TestDatabase.logger)
      try await admin.query("SELECT pg_terminate_backend(\(first))")
      // pg_terminate_backend only signals; wait until the backend is really gone.
      var gone = false
      let deadline = ContinuousClock.now + .seconds(30)
      while !gone, ContinuousClock.now < deadline {
        gone = try await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = \(first)").isEmpty
        if !gone { try await Task.sleep(for: .milliseconds(20)) }
      }
      await admin.shutdown()
      #expect(gone)
      // The idle session's socket now reports the termination; the pool notices before use.
      let second: Int = try #require(try await pool.query("SELECT pg_backend_pid() AS pid").first)
        .decode("pid")
      #expect(second != first)
    }
  }

  @Test func aSessionKilledMidQueryIsDroppedAndTheNextCallSucceeds() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      let pid: Int = try #require(try await pool.query("SELECT pg_backend_pid() AS pid").first)
        .decode("pid")
      let sleeper = Task { try await pool.query("SELECT pg_sleep(30)") }
      let admin = PostgresPool(
        configuration: PostgresConfiguration(url: db.adminURL), logger: TestDatabase.logger)
      var terminated = false
      let deadline = ContinuousClock.now + .seconds(30)
      while !terminated, ContinuousClock.now < deadline {
        let rows = try await admin.query(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE pid = \(pid) AND state = 'active'"
        )
        terminated = !rows.isEmpty
        if !terminated { try await Task.sleep(for: .milliseconds(20)) }
      }
      await admin.shutdown()
      #expect(terminated)
      let error = try await #require(throws: PostgresError.self) { try await sleeper.value }
      #expect(error.isUnavailable)
      #expect(try await pool.query("SELECT 1 AS v").first?.decode("v", as: Int.self) == 1)
    }
  }

  @Test func healthCheckAndShutdown() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      #expect(await pool.isHealthy())
      await pool.shutdown()
      let error = try await #require(throws: PostgresError.self) {
        try await pool.query("SELECT 1")
      }
      #expect(error.kind == .closed)
      #expect(await pool.isHealthy() == false)
    }
  }

  @Test func anUnreachableServerFailsFastAsUnavailable() async throws {
    // Port 1 on localhost refuses at once.
    let pool = PostgresPool(
      configuration: PostgresConfiguration(url: "postgresql://storekeeper@127.0.0.1:1/none"),
      logger: TestDatabase.logger)
    let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
    #expect(error.kind == .connection)
    #expect(error.isUnavailable)
    #expect(await pool.isHealthy() == false)
    await pool.shutdown()
  }

  @Test func aMalformedURLIsAConnectionErrorNotACrash() async throws {
    let pool = PostgresPool(
      configuration: PostgresConfiguration(url: "postgresql://host:notaport/db?bogus=1"),
      logger: TestDatabase.logger)
    let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
    #expect(error.kind == .connection)
    await pool.shutdown()
  }

  /// libpq quotes the URI (or the token it choked on) in its parse errors, which are logged.
  @Test func aMalformedURLsErrorDoesNotCarryItsPassword() async throws {
    for url in [
      "postgresql://sk:hunter2secret@[::1/db", "postgresql://sk:hunter2%zzsecret@127.0.0.1/db",
    ] {
      let pool = PostgresPool(
        configuration: PostgresConfiguration(url: url), logger: TestDatabase.logger)
      let error = try await #require(throws: PostgresError.self) {
        try await pool.query("SELECT 1")
      }
      #expect(error.kind == .connection)
      #expect(!error.message.contains("hunter2"), "\(error.message)")
      #expect(error.message.contains("***"), "\(error.message)")
      await pool.shutdown()
    }
  }

  /// Nothing is set through startup parameters (PgBouncer refuses `options`): a session keeps
  /// the server's time zone, and timestamps still read back as the same instant.
  @Test func sessionsKeepTheServerTimeZoneAndSetOnlyTheApplicationName() async throws {
    try await withTestDatabase { db in
      let setup = db.makePool(maxConnections: 1)
      try await setup.execute(
        PostgresQuery(unsafeSQL: "ALTER DATABASE \"\(db.name)\" SET timezone = 'Asia/Kathmandu'"))
      await setup.shutdown()
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let row = try #require(
        try await pool.query(
          "SELECT current_setting('TimeZone') AS tz, current_setting('application_name') AS app, current_setting('client_encoding') AS enc, timestamptz '2026-11-29 13:26:31.5+00' AS at, \(Date(timeIntervalSince1970: 1_800_000_000))::timestamptz AS bound"
        ).first)
      #expect(try row.decode("tz", as: String.self) == "Asia/Kathmandu")
      #expect(try row.decode("app", as: String.self) == "storekeeper")
      #expect(try row.decode("enc", as: String.self) == "UTF8")
      #expect(try row.decode("at", as: Date.self) == Date(timeIntervalSince1970: 1_795_958_791.5))
      #expect(try row.decode("bound", as: Date.self) == Date(timeIntervalSince1970: 1_800_000_000))
    }
  }
}
