import AppStore
import Foundation
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A signed transaction now decodes with any field absent (as Apple's libraries decode it), so
/// settling asks for what it needs: one without its id, original id, product or purchase date
/// is refused as `incomplete_transaction`, credits nothing and leaves the order as it was.
@Suite(.database) struct IncompleteTransactionTests {
  @Test func aVerifiedTransactionLackingWhatSettlingNeedsIsRefusedWithItsOwnCode() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let now = Int64(Date().timeIntervalSince1970 * 1000)
      let complete: [String: any Sendable] = [
        "transactionId": "2000000000000042", "originalTransactionId": "2000000000000042",
        "bundleId": DomainHarness.bundleId, "productId": order.productId, "quantity": 1,
        "purchaseDate": now - 1_000, "signedDate": now, "environment": "Production",
        "type": "Consumable", "appAccountToken": order.appAccountToken,
      ]
      for missing in ["transactionId", "originalTransactionId", "productId", "purchaseDate"] {
        let payload = try JSONSerialization.data(
          withJSONObject: complete.filter { $0.key != missing })
        let jws = try h.authority.signJWS(payload: Array(payload))
        var reason: String?
        do {
          _ = try await h.processor.process(
            .paid(tradeNo: order.tradeNo, proof: .signedTransaction(jws)),
            logger: DomainHarness.logger)
        } catch SettlementRefusal.invalidProof(let refused, _) {
          reason = refused
        }
        #expect(reason == "incomplete_transaction", "without \(missing)")
      }
      #expect(try await h.gold("alice") == 0)
      #expect(try await h.events(order.tradeNo) == ["created"])
      // The same purchase with every field settles: the refusals were about the fields only.
      let payload = try JSONSerialization.data(withJSONObject: complete)
      let result = try await h.processor.process(
        .paid(
          tradeNo: order.tradeNo,
          proof: .signedTransaction(
            h.authority.signJWS(
              payload: Array(payload)))), logger: DomainHarness.logger)
      guard case .settled = result else {
        Issue.record("expected settled, got \(result)")
        return
      }
      #expect(try await h.gold("alice") == 100)
    }
  }
}
