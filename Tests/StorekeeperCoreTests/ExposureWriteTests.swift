import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Exposures as the database keeps them: one row per user and experiment, holding when the
/// user was first exposed whichever instance's flush comes first, and one event.
@Suite(.database) struct ExposureWriteTests {
  /// Experiment `exp` running on placement `shop`.
  static func runningExperiment(_ h: DomainHarness) async throws {
    try await h.database.execute(
      "INSERT INTO placements (placement_id, offering_id) VALUES ('shop', 'default')")
    try await h.database.execute(
      """
      INSERT INTO experiments (experiment_id, placement_id, status, variants, attribution_hours)
      VALUES ('exp', 'shop', 'running', '[]', 24)
      """)
  }

  @Test func aLaterFlushOfAnEarlierExposureKeepsTheEarlierTime() async throws {
    try await DomainHarness.with { h in
      try await Self.runningExperiment(h)
      let recorder = ExposureRecorder(database: h.database, outbox: h.orders.outbox)
      func exposure(atMs: Int64) -> Exposure {
        Exposure(experimentId: "exp", userId: "u1", variant: "a", atMs: atMs)
      }
      // Instance B served the user at t1 and flushed first; instance A served them at t0 and
      // its flush was retried after.
      #expect(try await recorder.write([exposure(atMs: 1_700_000_060_000)]) == 1)
      #expect(try await recorder.write([exposure(atMs: 1_700_000_000_000)]) == 0)
      #expect(try await recorder.write([exposure(atMs: 1_700_000_090_000)]) == 0)
      let rows = try await h.database.query(
        """
        SELECT (extract(epoch FROM exposed_at) * 1000)::bigint AS ms,
               (SELECT count(*)::int FROM events WHERE user_id = 'u1'
                  AND type = 'experiment.exposed') AS events
        FROM experiment_exposures WHERE experiment_id = 'exp' AND user_id = 'u1'
        """)
      #expect(rows.count == 1)
      let ms: Int64 = try rows[0].decode("ms")
      let events: Int = try rows[0].decode("events")
      #expect(ms == 1_700_000_000_000)
      #expect(events == 1)
    }
  }

  /// A flush returns once what was served before it is written, a batch another flush is
  /// writing included: a conclusion that flushes first counts it.
  @Test func aFlushWaitsForABatchAnotherFlushIsWriting() async throws {
    try await DomainHarness.with { h in
      try await Self.runningExperiment(h)
      let recorder = ExposureRecorder(database: h.database, outbox: h.orders.outbox)
      recorder.record(Exposure(experimentId: "exp", userId: "u1", variant: "a", atMs: 1))
      func rows() async throws -> Int {
        try await h.database.query(
          "SELECT count(*)::int AS n FROM experiment_exposures"
        ).first?.decode("n") ?? -1
      }
      let lock = await TableLock.hold("experiment_exposures", in: "SHARE", on: h.database)
      // The loop's flush takes the batch and waits on the lock with it.
      let first = Task { try await recorder.flush() }
      try await LedgerConflictTests.someoneWaitsForALock(h)
      let second = Task {
        try await recorder.flush()
        return try await rows()
      }
      try await Task.sleep(for: .milliseconds(200))
      try await lock.release()
      try await first.value
      // Had it returned with nothing left to take, it would have counted none.
      #expect(try await second.value == 1)
    }
  }
}
