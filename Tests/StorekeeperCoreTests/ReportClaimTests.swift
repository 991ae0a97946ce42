import Foundation
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A claim takes at most its limit: the retry worker leases what it claims, so a claim past its
/// limit would hold reports it does not work on until the lease ends.
@Suite(.database) struct ReportClaimTests {
  @Test func aClaimTakesNoMoreThanItsLimit() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var ids: Set<Int64> = []
      for index in 0..<5 {
        let order = try await h.newOrder(user: "claim-\(index)")
        let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
        ids.insert(
          try await h.reports.insertPending(
            tradeNo: order.tradeNo, userId: "claim-\(index)", productId: order.productId,
            proof: proof))
      }
      h.clock.advance(by: 3_600)
      var claimed: [Int64] = []
      for expected in [2, 2, 1, 0] {
        let batch = try await h.reports.claimDue(limit: 2)
        #expect(batch.count == expected)
        claimed += batch.map(\.id)
      }
      #expect(Set(claimed) == ids && claimed.count == ids.count)
    }
  }
}
