import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The reconciler asks Apple outside any transaction, then compares under lock: a notification
/// about the subscription that Apple signed after its answer (a refund applied meanwhile, or
/// one waiting to be) is the later word, and the pass leaves the subscription to it.
@Suite(.database) struct ReconcileLaterWordTests {
  @Test func aNotificationSignedAfterApplesAnswerIsALaterWord() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct("club", type: .autoRenewable, grants: "{\"entitlement\": \"club\"}")
      let order = try await h.newOrder(user: "hal", product: "club")
      let latest = h.transaction(for: order)
      let original = latest.originalTransactionId
      let answeredMs: Int64 = 1_800_000_000_000
      try await h.database.execute(
        """
        INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state,
          signed_date, original_transaction_id)
        VALUES ('before', 'DID_RENEW', '{}', 'processed',
                timestamptz 'epoch' + \(answeredMs - 1)::bigint * interval '1 millisecond', \(original)),
               ('other', 'REFUND', '{}', 'processed',
                timestamptz 'epoch' + \(answeredMs + 1)::bigint * interval '1 millisecond', 'another')
        """)
      func later(_ signedMs: Int64?) async throws -> Bool {
        let apple = AppleSubscription(
          latest: latest, status: .active, graceMs: nil, familyShared: false, signedMs: signedMs)
        return try await h.database.withTransaction { tx in
          try await SubscriptionReconciler.notifiedSince(apple, original: original, on: tx)
        }
      }
      #expect(try await later(answeredMs) == false)
      try await h.database.execute(
        """
        INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state,
          signed_date, original_transaction_id)
        VALUES ('after', 'REFUND', '{}', 'pending',
                timestamptz 'epoch' + \(answeredMs + 1)::bigint * interval '1 millisecond', \(original))
        """)
      #expect(try await later(answeredMs) == true)
      #expect(try await later(answeredMs + 1) == false)
      // An answer Apple did not date is compared with nothing.
      #expect(try await later(nil) == false)
    }
  }
}
