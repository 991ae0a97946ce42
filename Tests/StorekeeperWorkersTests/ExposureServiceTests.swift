import StorekeeperLogging
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore
@testable import StorekeeperWorkers

/// The exposures loop on shutdown: what requests recorded since its last tick is written before
/// the service returns, although shutdown cancels the service's task.
@Suite(.database) struct ExposureServiceTests {
  @Test func shutdownWritesTheExposuresWaitingSinceTheLastTick() async throws {
    try await DomainHarness.with { h in
      try await h.database.execute(
        "INSERT INTO placements (placement_id, offering_id) VALUES ('shop', 'default')")
      try await h.database.execute(
        """
        INSERT INTO experiments (experiment_id, placement_id, status, variants, attribution_hours)
        VALUES ('exp', 'shop', 'running', '[]', 24)
        """)
      let recorder = ExposureRecorder(database: h.database, outbox: h.orders.outbox)
      let group = ServiceGroup(
        [
          ExposureService(
            recorder: recorder, signal: WorkSignal(),
            logger: Logger(label: "exposures", level: .critical))
        ], logger: Logger(label: "services", level: .critical))
      group.start()
      // The loop's first run (at start) is over; its next tick is a second away.
      try await Task.sleep(for: .milliseconds(200))
      for user in 0..<20 {
        recorder.record(Exposure(experimentId: "exp", userId: "u\(user)", variant: "a", atMs: 1))
      }
      // The table held by another session while shutdown begins: the last flush waits for it
      // (a cancelled one would have its statement cancelled while it waits, and write
      // nothing), as it would for a busy database.
      let lock = await TableLock.hold("experiment_exposures", in: "SHARE", on: h.database)
      let stopped = Task { await group.shutdown(within: .seconds(10)) }
      try await Task.sleep(for: .milliseconds(500))
      try await lock.release()
      #expect(await stopped.value.isEmpty)
      #expect(recorder.counts.pending == 0)
      let rows = try await h.database.query(
        """
        SELECT (SELECT count(*)::int FROM experiment_exposures) AS rows,
               (SELECT count(*)::int FROM events WHERE type = 'experiment.exposed') AS events
        """)
      #expect(try rows[0].decode("rows") as Int == 20)
      #expect(try rows[0].decode("events") as Int == 20)
    }
  }
}
