import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore
@testable import StorekeeperWorkers

@Suite(.database) struct ReportRetryWorkerTests {
  static func state(_ h: DomainHarness, _ id: Int64) async throws -> (String, Int) {
    let row = try #require(
      try await h.database.query(
        "SELECT outcome, attempts FROM trade_reports WHERE id = \(id)"
      ).first)
    return (try row.decode("outcome"), try row.decode("attempts"))
  }

  /// An order reported paid with a receipt Apple cannot be asked about yet: its report pending.
  static func pendingReport(_ h: DomainHarness) async throws -> (Order, PendingVerification) {
    try await h.addConsumable()
    let order = try await h.newOrder()
    return (order, try await pendingReport(h, of: order, receipt: "MIIT-a-receipt"))
  }

  /// Another report of `order`, with `receipt`, pending as the first.
  static func pendingReport(_ h: DomainHarness, of order: Order, receipt: String) async throws
    -> PendingVerification
  {
    let result = try await h.processor.process(
      .paid(tradeNo: order.tradeNo, proof: .receipt(receipt)), logger: DomainHarness.logger)
    guard case .pending(let pending) = result else {
      throw ExpectedPending(result: "\(result)")
    }
    return pending
  }

  /// An order with two reports waiting for Apple stays out of the sweeper's reach until the
  /// last of them is refused: it was closed when the first was, and reopened by the second.
  @Test func anOrderWaitsForItsLastPendingReport() async throws {
    try await DomainHarness.with { h in
      let (order, first) = try await Self.pendingReport(h)
      let second = try await Self.pendingReport(h, of: order, receipt: "MIIT-another-receipt")
      func verification() async throws -> String? {
        try await h.database.query(
          "SELECT verification FROM orders WHERE trade_no = \(order.tradeNo)"
        ).first?.decodeIfPresent("verification")
      }
      try await h.reports.finish(first.reportId, outcome: .invalid, code: "invalid_receipt")
      try await h.orders.clearPendingVerification(order.tradeNo)
      #expect(try await verification() == "pending")
      // Nor does one given up: the other still waits.
      let given = try await Self.pendingReport(h, of: order, receipt: "MIIT-a-third-receipt")
      h.clock.advance(by: 3600)
      let due = try #require(
        try await h.reports.claimDue(limit: 10).first { $0.id == given.reportId })
      try await h.reports.giveUp(due, reason: "gave_up", orders: h.orders)
      #expect(try await verification() == "pending")
      try await h.reports.finish(second.reportId, outcome: .invalid, code: "invalid_receipt")
      try await h.orders.clearPendingVerification(order.tradeNo)
      #expect(try await verification() == nil)
    }
  }

  /// Two waiting reports of one order given up at once: whichever comes second sees the first
  /// ended, and the order's verification fails (the sweeper may then expire it), not left
  /// pending on nothing.
  @Test func twoReportsGivenUpAtOnceFailTheirOrdersVerification() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      for round in 0..<5 {
        let order = try await h.newOrder()
        let reports = [
          try await Self.pendingReport(h, of: order, receipt: "MIIT-\(round)-a"),
          try await Self.pendingReport(h, of: order, receipt: "MIIT-\(round)-b"),
        ]
        h.clock.advance(by: 3600)
        let due = try await h.reports.claimDue(limit: 10).filter { claimed in
          reports.contains { $0.reportId == claimed.id }
        }
        #expect(due.count == 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
          for report in due {
            group.addTask {
              try await h.reports.giveUp(report, reason: "gave_up", orders: h.orders)
            }
          }
          try await group.waitForAll()
        }
        let verification: String? = try await h.database.query(
          "SELECT verification FROM orders WHERE trade_no = \(order.tradeNo)"
        ).first?.decodeIfPresent("verification")
        #expect(verification == "failed")
      }
    }
  }

  struct ExpectedPending: Error {
    var result: String
  }

  @Test func retriesOnThePolicysScheduleAndGivesUpWhenItSays() async throws {
    // Attempts at 0, 1, 3 and 7 s; the next would come at 15 s, past the 10 s window.
    try await DomainHarness.with(policy: RetryPolicy(baseMs: 1_000, windowMs: 10_000)) { h in
      let (order, pending) = try await Self.pendingReport(h)
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

  @Test func aWorkerWhoseLeaseRanOutChangesNothingOfTheNextHoldersClaim() async throws {
    try await DomainHarness.with(policy: RetryPolicy(baseMs: 1_000, windowMs: 10_000)) { h in
      let (order, pending) = try await Self.pendingReport(h)
      func nextAttempt() async throws -> String {
        try #require(
          try await h.database.query(
            "SELECT next_attempt_at::text AS at FROM trade_reports WHERE id = \(pending.reportId)"
          ).first
        ).decode("at")
      }
      h.clock.advance(by: 1)
      let first = try #require(try await h.reports.claimDue(limit: 1).first)
      // Its lease runs out; another worker claims the report.
      h.clock.advance(by: 600)
      let second = try #require(try await h.reports.claimDue(limit: 1).first)
      #expect(second.attempts == first.attempts + 1)
      let held = try await nextAttempt()
      try await h.reports.retryLater(
        first.id, error: "late", atMs: h.clock.clock.milliseconds + 1_000, attempt: first.attempts)
      #expect(try await nextAttempt() == held)
      try await h.reports.giveUp(first, reason: "late", orders: h.orders)
      #expect(try await Self.state(h, pending.reportId) == ("pending", second.attempts))
      #expect(try await h.events(order.tradeNo) == ["created"])
      // The holder's own word counts.
      try await h.reports.retryLater(
        second.id, error: "still", atMs: h.clock.clock.milliseconds + 1_000,
        attempt: second.attempts)
      #expect(try await nextAttempt() != held)
    }
  }
}

@Suite(.database) struct MisconfiguredReportTests {
  static let wrongSecret: [String: any Sendable] = ["status": 21004]

  @Test func aWrongSharedSecretKeepsTheReportPendingPastTheWindowUntilTheSettingIsFixed()
    async throws
  {
    let apple = SwitchableAppleTransport(Self.wrongSecret)
    try await DomainHarness.with(
      policy: RetryPolicy(baseMs: 1_000, windowMs: 2_000), apple: apple
    ) { h in
      let (order, pending) = try await ReportRetryWorkerTests.pendingReport(h)
      #expect(h.appleSettings.current.map(\.misconfiguration.setting) == [.sharedSecret])
      let worker = ReportRetryWorker(
        reports: h.reports, orders: h.orders, processor: h.processor, receipts: h.receipts,
        logger: DomainHarness.logger)
      // Far past the window: a retryable report would have been given up by now.
      for _ in 0..<3 {
        h.clock.advance(by: 3_601)
        await worker.runOnce()
      }
      let (outcome, attempts) = try await ReportRetryWorkerTests.state(h, pending.reportId)
      #expect(outcome == "pending" && attempts == 4)

      apple.set([
        "status": 0,
        "receipt": [
          "bid": DomainHarness.bundleId, "bvrs": "1.0", "item_id": "1",
          "product_id": "gold.100", "quantity": "1", "transaction_id": "9000000000000001",
          "original_transaction_id": "9000000000000001", "purchase_date_ms": "1700000000000",
        ],
      ])
      h.clock.advance(by: 3_601)
      await worker.runOnce()
      #expect(try await ReportRetryWorkerTests.state(h, pending.reportId).0 == "settled")
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .tradeSuccess)
      #expect(h.appleSettings.current.isEmpty)
    }
  }
}
