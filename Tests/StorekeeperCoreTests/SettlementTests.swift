import AppStore
import Foundation
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

@Suite(.database) struct SettlementTests {
  @Test func aNewSignedTransactionSettlesInFourRoundTripsAndCreditsOnce() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(quantity: 2)
      let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
      let before = h.database.roundTrips.count
      let result = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: proof), logger: DomainHarness.logger)
      let trips = h.database.roundTrips.count - before
      print("POST /v1/trade-reports, new signed transaction: \(trips) database round trips")
      #expect(trips <= 4)
      guard case .settled(let settled) = result else {
        Issue.record("expected settled, got \(result)")
        return
      }
      #expect(settled.order.tradeStatus == .tradeSuccess)
      #expect(settled.delivery.granted.balance == ["gold": 200])
      #expect(try await h.gold("alice") == 200)
      // The same report again: the same answer, nothing credited twice.
      let again = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: proof), logger: DomainHarness.logger)
      guard case .settled(let repeated) = again else {
        Issue.record("expected settled, got \(again)")
        return
      }
      #expect(repeated.order.transactionId == settled.order.transactionId)
      #expect(try await h.gold("alice") == 200)
      #expect(try await h.events(order.tradeNo) == ["created", "paid"])
    }
  }

  @Test func aTransactionPaysOneOrderEvenWhenTwoRaceForIt() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let first = try await h.newOrder(user: "alice")
      let second = try await h.newOrder(user: "alice")
      // No app_account_token: either order could claim it; exactly one may.
      var transaction = h.transaction(for: first)
      transaction.appAccountToken = nil
      let unbound = transaction
      let product = try await h.product()
      // Each race's result, as text: "settled", a refusal's code, or an unexpected error.
      let outcomes = await withTaskGroup(of: String.self) { group in
        for order in [first, second] {
          group.addTask {
            do {
              let settled = try await h.settlement.settle(
                order.tradeNo, product: product, transactions: [unbound], record: nil,
                cause: .report)
              return "settled \(settled.order.tradeNo)"
            } catch let refusal as SettlementRefusal {
              return refusal.code
            } catch {
              return "error: \(error)"
            }
          }
        }
        var results: [String] = []
        for await result in group { results.append(result) }
        return results
      }
      // The loser is refused, or, the purchase being its own user's, answered with the order
      // that holds it (a repeat); either way one order holds it and one credit is made.
      let holders = Set(outcomes.filter { $0.hasPrefix("settled ") })
      #expect(holders.count == 1, "\(outcomes)")
      #expect(outcomes.allSatisfy { $0.hasPrefix("settled ") || $0 == "transaction_already_used" })
      #expect(try await h.gold("alice") == 100)
    }
  }

  @Test func refusalsSayWhyAndChangeNothing() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      try await h.addConsumable("gold.500", gold: 500)
      let order = try await h.newOrder()
      let product = try await h.product()
      func refusal(_ transaction: VerifiedTransaction) async -> String? {
        do {
          _ = try await h.settlement.settle(
            order.tradeNo, product: product, transactions: [transaction], record: nil,
            cause: .report)
          return nil
        } catch let refusal as SettlementRefusal {
          return refusal.code
        } catch {
          return "\(error)"
        }
      }
      #expect(await refusal(h.transaction(for: order, productId: "gold.500")) == "product_mismatch")
      #expect(
        await refusal(h.transaction(for: order, token: UUID().uuidString.lowercased()))
          == "account_token_mismatch")
      #expect(await refusal(h.transaction(for: order, quantity: 3)) == "quantity_mismatch")
      var revoked = h.transaction(for: order)
      revoked.revocationDate = 1
      #expect(await refusal(revoked) == "transaction_revoked")
      #expect(try await h.gold("alice") == 0)
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .waitBuyerPay)
      #expect(try await h.events(order.tradeNo) == ["created"])
    }
  }

  @Test func aLatePaymentReopensAClosedOrderButNotARefundedOne() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let product = try await h.product()
      let order = try await h.newOrder()
      _ = try await h.processor.process(
        .closed(tradeNo: order.tradeNo, reason: .cancelled), logger: DomainHarness.logger)
      let paid = try await h.settlement.settle(
        order.tradeNo, product: product, transactions: [h.transaction(for: order)], record: nil,
        cause: .report)
      #expect(paid.order.tradeStatus == .tradeSuccess)
      #expect(paid.order.closeReason == nil && paid.order.closedAt == nil)
      #expect(try await h.events(order.tradeNo) == ["created", "cancelled", "reopened_by_payment"])

      let refunded = try await h.newOrder()
      let purchase = h.transaction(for: refunded)
      _ = try await h.settlement.settle(
        refunded.tradeNo, product: product, transactions: [purchase], record: nil, cause: .report)
      let transition = try OrderStateMachine.transition(
        from: .tradeSuccess, closeReason: nil, on: .refunded)
      try await h.orders.transition(
        .order(refunded.tradeNo), transition, cause: .notification, on: h.database)
      await #expect(throws: SettlementRefusal.orderRefunded(tradeNo: refunded.tradeNo)) {
        _ = try await h.settlement.settle(
          refunded.tradeNo, product: product, transactions: [h.transaction(for: refunded)],
          record: nil, cause: .report)
      }
    }
  }

  @Test func aTransitionIsGuardedByItsStartingState() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let cancel = try OrderStateMachine.transition(
        from: .waitBuyerPay, closeReason: nil, on: .cancelled)
      let first = try await h.orders.transition(
        .order(order.tradeNo), cancel, cause: .report, on: h.database)
      #expect(first.map(\.closeReason) == [.cancelled])
      // The order is no longer WAIT_BUYER_PAY: the same move changes nothing, writes no event.
      let second = try await h.orders.transition(
        .order(order.tradeNo), cancel, cause: .report, on: h.database)
      #expect(second.isEmpty)
      #expect(try await h.events(order.tradeNo) == ["created", "cancelled"])
    }
  }

  @Test func theSweeperClosesOnlyWhatExpiredByTheInjectedClock() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      #expect(try await h.orders.closeExpired(now: h.clock.clock.now()) == 0)
      // Past the hour by a margin: the order expires by the database's clock, which a loaded
      // machine may have moved on since the harness's clock started.
      h.clock.advance(by: 3_600 + 600)
      #expect(try await h.orders.closeExpired(now: h.clock.clock.now()) == 1)
      let closed = try await h.orders.find(order.tradeNo)
      #expect(closed?.tradeStatus == .tradeClosed && closed?.closeReason == .expired)
      #expect(try await h.orders.events(order.tradeNo).last?.cause == "sweeper")
    }
  }
}
