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
      let (_, renewal) = try await RenewalOwnerTests.subscription(h, token: true)
      let didRenew = try DomainHarness.notification("DID_RENEW", transaction: renewal)

      // Another request records the renewal (here without an owner, as a post by another user
      // once left it) and commits only once the notification waits for that row.
      await #expect(throws: NotificationLostRace.self) {
        try await LedgerConflictTests.interleave(
          h,
          first: { tx in
            try await TransactionRecord.recordUnowned(renewal, source: .signedTransaction, on: tx)
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
