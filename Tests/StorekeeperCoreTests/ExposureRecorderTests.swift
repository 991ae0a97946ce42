import Postgres
import StorekeeperLogging
import Testing

@testable import StorekeeperCore

/// The recorder's memory, without a database: nothing here flushes, so the pool never
/// connects.
@Suite struct ExposureRecorderTests {
  private func recorder(maxPending: Int = 100) -> ExposureRecorder {
    let pool = PostgresPool(
      configuration: PostgresConfiguration(url: "postgresql://nobody@127.0.0.1:1/none"),
      logger: Logger(label: "test"))
    return ExposureRecorder(
      database: pool, outbox: EventOutbox(clock: .system), maxPending: maxPending)
  }

  private func exposure(_ user: String) -> Exposure {
    Exposure(experimentId: "exp", userId: user, variant: "a", atMs: 0)
  }

  @Test func aUserIsRecordedOnceWhileTheirExposureWaits() {
    let recorder = recorder()
    var built = 0
    for _ in 0..<3 {
      recorder.record(ExperimentAssignment.key(experimentId: "exp", userId: "u1")) {
        built += 1
        return exposure("u1")
      }
    }
    recorder.record(exposure("u2"))
    #expect(built == 1, "an exposure is built only for a user not seen yet")
    #expect(recorder.counts.pending == 2)
    #expect(recorder.counts.dropped == 0)
  }

  @Test func aDroppedExposureIsNotTakenForSeen() {
    let recorder = recorder(maxPending: 1)
    recorder.record(exposure("u1"))
    recorder.record(exposure("u2"))
    #expect(recorder.counts.pending == 1)
    #expect(recorder.counts.dropped == 1)
    // Dropped, not remembered: the next request for the same user tries again.
    recorder.record(exposure("u2"))
    #expect(recorder.counts.dropped == 2)
    recorder.record(exposure("u1"))
    #expect(recorder.counts.dropped == 2, "u1 waits already")
  }
}
