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
      h.clock.advance(by: 3_601)
      var sweeper = OrderSweeper(
        database: h.database, orders: h.orders, idempotency: IdempotencyStore(database: h.database),
        reports: h.reports, clock: h.clock.clock, logger: DomainHarness.logger)
      sweeper.expiryBatch = 2
      #expect(try await sweeper.closeExpired() == 5)
      for order in made {
        #expect(try await h.orders.find(order.tradeNo)?.closeReason == .expired)
      }
      #expect(try await sweeper.closeExpired() == 0)
    }
  }
}
