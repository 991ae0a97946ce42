import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// `storekeeper_refund_plan_prorated` (wallet.sql) over a sequence of Apple's cumulative
/// `revocationPercentage` values for one purchase: what the steps take adds up to one rounding
/// of the last share of what the purchase credited, however Apple splits it. Each increment
/// rounded on its own gained up to half a unit per step (16.667%, 33.334%, 50.001% of 3 took 3).
@Suite(.database) struct ProratedRefundPlanTests {
  static let sequences: [[Int32]] = [
    [16_667, 33_334, 50_001], [1, 2, 99_999], [33_333, 66_666, 99_999], [50_000],
    [10_000, 25_000, 49_999, 50_000, 75_000], [12_345, 12_346, 80_000, 80_001],
  ]
  static let credits = [1, 3, 7, 100]

  @Test func theTakesOfSuccessiveSharesAddUpToOneRoundingOfTheLast() async throws {
    try await DomainHarness.with { h in
      for credited in Self.credits {
        try await h.addConsumable("gold.\(credited)", gold: credited)
      }
      for credited in Self.credits {
        for (index, shares) in Self.sequences.enumerated() {
          let user = "u\(credited)-\(index)"
          let order = try await h.newOrder(user: user, product: "gold.\(credited)")
          let transaction = h.transaction(for: order)
          _ = try await h.processor.process(
            .paid(tradeNo: order.tradeNo, proof: .signedTransaction(try h.signed(transaction))),
            logger: DomainHarness.logger)
          var taken: Int64 = 0
          var before: Int32 = 0
          for share in shares {
            let plan = RefundShare.prorated(milliunits: share, before: before)
            let owed = try await h.database.query(
              "SELECT coalesce(sum(owed), 0)::bigint AS owed FROM \(plan.plan(order.tradeNo))"
            ).first?.decode("owed", as: Int64.self)
            taken += owed ?? 0
            // The ledger takes what the plan says, so the next step sees what is left.
            try await h.database.execute(
              Ledger.refundShare(
                tradeNo: order.tradeNo, plan, transactionId: transaction.transactionId,
                policy: .debt))
            before = share
          }
          let last = Int64(shares.last ?? 0)
          // round(credited × last / 100000), half away from zero (all positive here).
          let expected = (Int64(credited) * last * 2 + 100_000) / 200_000
          #expect(taken == expected, "credited \(credited), shares \(shares)")
          #expect(try await h.gold(user) == Int64(credited) - expected)
        }
      }
    }
  }
}
