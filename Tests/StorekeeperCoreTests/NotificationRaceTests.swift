import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A renewal's notification racing another request that records the same renewal: the
/// notification finds the transaction unrecorded (nothing to lock), then loses its claim. It
/// is applied again on the next pass, where the transaction is known, not kept as failed.
@Suite(.database) struct NotificationRaceTests {
  @Test func aRenewalNotificationThatLosesItsClaimIsForTheNextPass() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct("club", type: .autoRenewable, grants: "{\"entitlement\": \"club\"}")
      let order = try await h.newOrder(user: "hal", product: "club")
      let now = h.clock.clock.milliseconds
      var first = h.transaction(for: order)
      first.type = "Auto-Renewable Subscription"
      first.expiresDate = now + 60_000
      _ = try await h.receipts.apply([first], userId: "hal", productId: nil)
      var renewal = first
      renewal.transactionId = UUID().uuidString
      renewal.purchaseDate = now + 60_000
      renewal.expiresDate = now + 3_600_000
      let didRenew = try DomainHarness.notification("DID_RENEW", transaction: renewal)
      let recorded = renewal

      // Another request records the renewal (here without an owner, as a post by another user
      // once left it) and commits only once the notification waits for that row.
      await #expect(throws: NotificationLostRace.self) {
        try await LedgerConflictTests.interleave(
          h,
          first: { tx in
            try await TransactionRecord.recordUnowned(recorded, source: .signedTransaction, on: tx)
          },
          start: { try await h.apply(didRenew) }, then: { _ in })
      }
      // The next pass finds it recorded and gives the period to its subscriber, once.
      #expect(try await h.apply(didRenew) == .processed(.renewalRecorded))
      let owner = try await NotificationEffectsTests.owner(h, renewal.transactionId)
      #expect(owner.userId == "hal")
      #expect(try await h.apply(didRenew) == .processed(.datesUpdated))
    }
  }
}
