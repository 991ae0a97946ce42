import AppStore
import Foundation
import StorekeeperCore
import StorekeeperTestSupport
import StorekeeperWorkers
import Synchronization
import Testing

/// The retry worker verifies the reports it claims at once, each within the verification
/// lanes' caps, instead of one Apple call after another.
@Suite(.database) struct RetryDrainTests {
  struct Unreachable: Error {}

  /// verifyReceipt that fails at once until armed; armed, each call waits (up to a bound) until
  /// `expected` calls have been in flight together, then fails as an unreachable Apple does.
  final class BarrierTransport: ReceiptTransport {
    private struct State {
      var armed = false
      var inFlight = 0
      var peak = 0
    }
    private let state = Mutex(State())
    let expected: Int

    init(expected: Int) { self.expected = expected }

    func arm() { state.withLock { $0.armed = true } }
    var peak: Int { state.withLock { $0.peak } }

    func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration)
      async throws -> (status: Int, body: [UInt8])
    {
      let armed = state.withLock { state -> Bool in
        guard state.armed else { return false }
        state.inFlight += 1
        state.peak = max(state.peak, state.inFlight)
        return true
      }
      guard armed else { throw Unreachable() }
      // A bound on waiting, not a timing: called one at a time, no call ever sees the others.
      // Generous, so that a loaded machine starting the calls slowly still meets it. Once
      // `expected` were in flight together every call goes on (the first to leave lowers the
      // count the others would otherwise keep waiting for).
      let deadline = ContinuousClock.now + .seconds(30)
      while state.withLock({ $0.peak }) < expected, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
      }
      state.withLock { $0.inFlight -= 1 }
      throw Unreachable()
    }
  }

  @Test func theReportsClaimedTogetherAreVerifiedTogether() async throws {
    let apple = BarrierTransport(expected: 3)
    try await DomainHarness.with(apple: apple) { h in
      try await h.addConsumable()
      for _ in 0..<3 {
        let order = try await h.newOrder()
        let result = try await h.processor.process(
          .paid(tradeNo: order.tradeNo, proof: .receipt("MIIT-a-receipt")),
          logger: DomainHarness.logger)
        guard case .pending = result else {
          Issue.record("expected pending while Apple is away, got \(result)")
          return
        }
      }
      apple.arm()
      let worker = ReportRetryWorker(
        reports: h.reports, orders: h.orders, processor: h.processor, receipts: h.receipts,
        logger: DomainHarness.logger)
      h.clock.advance(by: 31)
      await worker.runOnce()
      #expect(apple.peak == 3)
    }
  }
}
