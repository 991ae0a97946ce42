import Foundation
import Postgres
import Testing

@testable import Storekeeper

@Suite struct ReportRetryWorkerTests {
  static func state(_ h: DomainHarness, _ id: Int64) async throws -> (String, Int) {
    let row = try #require(
      try await h.database.query(
        "SELECT outcome, attempts FROM trade_reports WHERE id = \(id)"
      ).first)
    return (try row.decode("outcome"), try row.decode("attempts"))
  }

  @Test func retriesOnThePolicysScheduleAndGivesUpWhenItSays() async throws {
    // Attempts at 0, 1, 3 and 7 s; the next would come at 15 s, past the 10 s window.
    try await DomainHarness.with(policy: RetryPolicy(baseMs: 1_000, windowMs: 10_000)) { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let result = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: .receipt("MIIT-a-receipt")),
        logger: DomainHarness.logger)
      guard case .pending(let pending) = result else {
        Issue.record("expected pending, got \(result)")
        return
      }
      #expect(pending.order.verification == .pending)
      let worker = ReportRetryWorker(
        reports: h.reports, orders: h.orders, processor: h.processor, receipts: h.receipts,
        logger: DomainHarness.logger)

      h.clock.advance(by: 0.9)
      await worker.runOnce()
      #expect(try await Self.state(h, pending.reportId) == ("pending", 1))
      h.clock.advance(by: 0.1)  // 1 s after the first attempt
      await worker.runOnce()
      #expect(try await Self.state(h, pending.reportId) == ("pending", 2))
      h.clock.advance(by: 2)  // 3 s
      await worker.runOnce()
      #expect(try await Self.state(h, pending.reportId) == ("pending", 3))
      h.clock.advance(by: 4)  // 7 s
      await worker.runOnce()
      #expect(try await Self.state(h, pending.reportId) == ("gave_up", 4))
      let after = try #require(try await h.orders.find(order.tradeNo))
      #expect(after.verification == .failed && after.tradeStatus == .waitBuyerPay)
      #expect(try await h.events(order.tradeNo) == ["created", "verification_gave_up"])
    }
  }
}
