import AppStore
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A report acts for a user: another user's order is refused exactly as a missing one, before
/// anything is recorded or settled.
@Suite(.database) struct ReportOwnerTests {
  func refusal(_ body: () async throws -> ReportResult) async -> SettlementRefusal? {
    do {
      _ = try await body()
      return nil
    } catch let refusal as SettlementRefusal {
      return refusal
    } catch {
      return nil
    }
  }

  @Test func anotherUsersOrderIsNotFoundForBothReportKinds() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "alice")
      let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
      let paid = TradeReport.paid(tradeNo: order.tradeNo, proof: proof)
      let closed = TradeReport.closed(tradeNo: order.tradeNo, reason: .cancelled)
      for report in [paid, closed] {
        let refused = await refusal {
          try await h.processor.process(report, actingUser: "mallory", logger: DomainHarness.logger)
        }
        #expect(refused == .orderNotFound(tradeNo: order.tradeNo))
      }
      #expect(try await h.gold("alice") == 0)
      #expect(try await h.gold("mallory") == 0)
      #expect(try await h.events(order.tradeNo) == ["created"])
      let row = try #require(
        try await h.database.query(
          "SELECT count(*)::int AS n FROM trade_reports WHERE trade_no = \(order.tradeNo)"
        ).first)
      #expect(try row.decode("n") as Int == 0)
      // The owner, and a trusted caller (nil), are heard.
      let own = try await h.processor.process(
        paid, actingUser: "alice", logger: DomainHarness.logger)
      guard case .settled = own else {
        Issue.record("expected settled, got \(own)")
        return
      }
      #expect(try await h.gold("alice") == 100)
    }
  }

  /// PostgreSQL compares user ids byte for byte: a canonically equivalent id ("jose" with a
  /// combining accent, which Swift's `==` calls equal to the precomposed one) is another user.
  @Test func aLookAlikeUsersOrderIsNotFoundForBothReportKinds() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "jos\u{e9}")
      let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
      let paid = TradeReport.paid(tradeNo: order.tradeNo, proof: proof)
      let closed = TradeReport.closed(tradeNo: order.tradeNo, reason: .cancelled)
      for report in [closed, paid] {
        let refused = await refusal {
          try await h.processor.process(
            report, actingUser: "jose\u{301}", logger: DomainHarness.logger)
        }
        #expect(refused == .orderNotFound(tradeNo: order.tradeNo))
      }
      #expect(try await h.events(order.tradeNo) == ["created"])
      #expect(try await h.gold("jose\u{301}") == 0)
    }
  }
}
