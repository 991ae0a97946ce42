import Foundation
import Testing

@testable import Postgres

/// Stops and restarts a PostgreSQL server under a live pool and listener.
///
/// It runs its own private cluster, next to the test server's data directory
/// (`STOREKEEPER_TEST_PGDATA`, which scripts/test sets and later removes), instead of stopping
/// the shared test server: every other live test in this process, of any module, would fail
/// during the outage.
@Suite(.serialized, .database) struct DatabaseRestartTests {
  struct Server {
    let dataDirectory: String
    let port: String

    var url: String { "postgresql://storekeeper@127.0.0.1:\(port)/postgres" }

    /// Creates and starts a cluster on a free port (initdb takes a few seconds).
    static func startPrivate() async throws -> Server {
      let testData = try #require(
        ProcessInfo.processInfo.environment["STOREKEEPER_TEST_PGDATA"],
        "scripts/test sets STOREKEEPER_TEST_PGDATA")
      let directory =
        URL(fileURLWithPath: testData).deletingLastPathComponent().path + "/restart-test-"
        + String(UUID().uuidString.prefix(8))
      let firstPort = String(Int.random(in: 16_000..<24_000))
      var server = Server(dataDirectory: directory, port: firstPort)
      try await server.runOffPool(
        #"p=$(free_port "$2") && pg_start "$1" "$p" && echo "$p" > "$1.port""#)
      let written = try String(contentsOfFile: directory + ".port", encoding: .utf8)
      server = Server(
        dataDirectory: directory, port: written.trimmingCharacters(in: .whitespacesAndNewlines))
      return server
    }

    func remove() {
      try? run(#"pg_stop "$1"; rm -rf "$1" "$1.port""#)
    }

    func stop() async throws { try await runOffPool("pg_stop \"$1\"") }
    func start() async throws { try await runOffPool("pg_start \"$1\" \"$2\"") }

    /// `run` on a thread of its own: initdb and pg_ctl take seconds, which must not hold a
    /// thread of the cooperative pool every other test needs.
    private func runOffPool(_ command: String) async throws {
      let server = self
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        Thread { continuation.resume(with: Result { try server.run(command) }) }.start()
      }
    }

    /// Calls the functions of scripts/lib/common.sh, which know how to run the server as the
    /// right user. posix_spawn + waitpid rather than Foundation's Process, whose
    /// `waitUntilExit` was seen to hang once pg_ctl had daemonized the server.
    private func run(_ command: String) throws {
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
      let script = "cd \"$3\" && source scripts/lib/common.sh && " + command
      let arguments = ["/bin/bash", "-c", script, "bash", dataDirectory, port, root]
      var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
      defer { cArguments.forEach { free($0) } }
      var pid: pid_t = 0
      let spawned = posix_spawn(&pid, "/bin/bash", nil, nil, &cArguments, environ)
      try #require(spawned == 0, "cannot run bash (\(spawned))")
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      try #require(status == 0, "\(command) failed with status \(status)")
    }
  }

  @Test func poolAndListenerRecoverWhenTheServerRestarts() async throws {
    let server = try await Server.startPrivate()
    defer { server.remove() }
    var configuration = PostgresConfiguration(url: server.url)
    configuration.maxConnections = 4
    let pool = PostgresPool(configuration: configuration, logger: TestDatabase.logger)
    defer { Task { await pool.shutdown() } }
    do {
      let received = Recorder<String>()
      let connects = Recorder<Bool>()
      let listener = PostgresListener(
        url: server.url, channels: ["restart"], logger: TestDatabase.logger,
        onNotification: { _, payload in received.append(payload) },
        onConnect: { connects.append(true) })
      listener.start()
      defer { listener.stop() }
      #expect(await eventually { connects.count == 1 })

      // Several idle sessions, all of which the restart will kill.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<3 { group.addTask { try await pool.query("SELECT pg_sleep(0.05)") } }
        try await group.waitForAll()
      }
      try await pool.notify(channel: "restart", payload: "before")
      #expect(await eventually { received.count == 1 })

      try await server.stop()
      let outage: Result<Void, any Error>
      do {
        let error = try await #require(throws: PostgresError.self) {
          try await pool.query("SELECT 1")
        }
        #expect(error.isUnavailable)
        #expect(await pool.isHealthy() == false)
        outage = .success(())
      } catch {
        outage = .failure(error)
      }
      try await server.start()
      try outage.get()

      // The same pool, not recreated, works again at once.
      #expect(try await pool.query("SELECT 1 AS v").first?.decode("v", as: Int.self) == 1)
      #expect(await pool.isHealthy())
      // The listener reconnects by itself, says so, and receives again.
      #expect(await eventually { connects.count >= 2 })
      try await pool.notify(channel: "restart", payload: "after")
      #expect(await eventually { received.all.contains("after") })
      #expect(received.all == ["before", "after"])
    }
  }
}
