import StorekeeperLogging
import Synchronization
import Testing

@testable import StorekeeperCore
@testable import StorekeeperWorkers

/// The workers' lifecycle: started and stopped as a list, a run in hand finishing uncancelled.
@Suite struct ServiceGroupTests {
  static let logger = Logger(label: "services", level: .critical)

  final class Runs: Sendable {
    let started = Mutex(0)
    let finished = Mutex(0)
    let sawCancellation = Mutex(false)
  }

  @Test func aWakeRunsTheLoopAtOnceAndShutdownLetsTheRunInHandFinish() async throws {
    let runs = Runs()
    let signal = WorkSignal()
    let loop = BackgroundLoop(
      name: "test", intervalMs: 3_600_000, signal: signal, logger: Self.logger
    ) {
      runs.started.withLock { $0 += 1 }
      try? await Task.sleep(for: .milliseconds(200))
      if Task.isCancelled { runs.sawCancellation.withLock { $0 = true } }
      runs.finished.withLock { $0 += 1 }
    }
    let group = ServiceGroup([loop], logger: Self.logger)
    group.start()
    // The first run is the start's; a wake while it runs coalesces into one more.
    while runs.started.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
    signal.wake()
    signal.wake()
    while runs.started.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
    #expect(await group.shutdown(within: .seconds(10)).isEmpty)
    #expect(runs.finished.withLock { $0 } == runs.started.withLock { $0 })
    #expect(runs.started.withLock { $0 } == 2)
    #expect(!runs.sawCancellation.withLock { $0 })
  }

  @Test func shutdownStartsNoFurtherRunAndTheRunInHandSeesTheStop() async throws {
    // A wake buffered while a run is in hand, then shutdown: the buffered wake starts nothing,
    // and the run in hand learns of the stop (a body going on in batches stops claiming).
    let runs = Runs()
    let signal = WorkSignal()
    let loop = BackgroundLoop(
      name: "test", intervalMs: 3_600_000, signal: signal, logger: Self.logger
    ) {
      runs.started.withLock { $0 += 1 }
      while !LoopStop.requested { try? await Task.sleep(for: .milliseconds(10)) }
      runs.sawCancellation.withLock { $0 = true }
      runs.finished.withLock { $0 += 1 }
    }
    let group = ServiceGroup([loop], logger: Self.logger)
    group.start()
    while runs.started.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
    signal.wake()
    #expect(await group.shutdown(within: .seconds(10)).isEmpty)
    #expect(runs.sawCancellation.withLock { $0 })
    #expect(runs.started.withLock { $0 } == 1)
    #expect(runs.finished.withLock { $0 } == 1)
  }

  @Test func shutdownSaysSoWhenAServiceOverrunsItsGrace() async {
    struct Stubborn: Service {
      let name = "stubborn"
      func run() async {
        // Ignores cancellation for longer than the grace period.
        await Task { try? await Task.sleep(for: .seconds(2)) }.value
      }
    }
    let group = ServiceGroup([Stubborn()], logger: Self.logger)
    group.start()
    // Named, so the log says what was still running rather than guessing.
    #expect(await group.shutdown(within: .milliseconds(100)) == ["stubborn"])
  }
}
