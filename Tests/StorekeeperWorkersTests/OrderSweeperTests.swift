import Foundation
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore
@testable import StorekeeperWorkers

/// The sweep closes every expired order it can within its budget, a batch at a time, not one
/// batch per interval: a backlog of expired orders holds their users' open-order slots.
@Suite(.database) struct OrderSweeperTests {
  @Test func aSweepClosesBatchAfterBatchUntilNoneIsLeft() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var made: [Order] = []
      for index in 0..<5 { made.append(try await h.newOrder(user: "sweep-\(index)")) }
      // Orders expire by the database's clock, an hour after they are made; the harness's clock
      // started earlier, by however long a loaded machine took to make them.
      h.clock.advance(by: 3_600 + 600)
      var sweeper = OrderSweeper(
        database: h.database, orders: h.orders, idempotency: IdempotencyStore(database: h.database),
        reports: h.reports, clock: h.clock.clock, logger: DomainHarness.logger)
      sweeper.expiryBatch = 2
      // A budget no loaded CI machine can spend on three batches of two: this test is about
      // batching; the budget's own stop is the next test.
      sweeper.expiryBudget = .seconds(3_600)
      #expect(try await sweeper.closeExpired() == 5)
      for order in made {
        #expect(try await h.orders.find(order.tradeNo)?.closeReason == .expired)
      }
      #expect(try await sweeper.closeExpired() == 0)
    }
  }

  @Test func aSpentBudgetLeavesTheRestForTheNextSweep() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      for index in 0..<5 { _ = try await h.newOrder(user: "budget-\(index)") }
      h.clock.advance(by: 3_600 + 600)
      var sweeper = OrderSweeper(
        database: h.database, orders: h.orders, idempotency: IdempotencyStore(database: h.database),
        reports: h.reports, clock: h.clock.clock, logger: DomainHarness.logger)
      sweeper.expiryBatch = 2
      sweeper.expiryBudget = .zero
      #expect(try await sweeper.closeExpired() == 2)
      #expect(try await sweeper.closeExpired() == 2)
      #expect(try await sweeper.closeExpired() == 1)
      #expect(try await sweeper.closeExpired() == 0)
    }
  }
}
