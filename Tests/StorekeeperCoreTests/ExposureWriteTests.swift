import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Exposures as the database keeps them: one row per user and experiment, holding when the
/// user was first exposed whichever instance's flush comes first, and one event.
@Suite(.database) struct ExposureWriteTests {
  @Test func aLaterFlushOfAnEarlierExposureKeepsTheEarlierTime() async throws {
    try await DomainHarness.with { h in
      try await h.database.execute(
        "INSERT INTO placements (placement_id, offering_id) VALUES ('shop', 'default')")
      try await h.database.execute(
        """
        INSERT INTO experiments (experiment_id, placement_id, status, variants, attribution_hours)
        VALUES ('exp', 'shop', 'running', '[]', 24)
        """)
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
}
