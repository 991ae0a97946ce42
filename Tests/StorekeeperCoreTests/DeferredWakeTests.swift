import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A notification deferred while the settlement that records its transaction was still
/// uncommitted is woken by a later pass; a pass re-checks only those deferred lately, and all
/// of them once an hour (deferred notifications grow with purchases never reported here).
@Suite(.database) struct DeferredWakeTests {
  @Test func aPassChecksTheLatelyDeferredAndTheHourlyPassAllOfThem() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var configuration = AppStoreConfiguration(bundleId: DomainHarness.bundleId)
      configuration.extraRootCertificatesPEM = [h.authority.rootCertificatePEM]
      let hourly = DeferredWakeSchedule()
      let service = NotificationService(
        database: h.database, verifier: try SignedDataVerifier(configuration: configuration),
        settlement: h.settlement, catalog: h.catalog, clock: h.clock.clock,
        logger: DomainHarness.logger, deferredWakes: hourly)
      var purchases: [String: VerifiedTransaction] = [:]
      for name in ["lately", "long-ago"] {
        let order = try await h.newOrder(user: name)
        let purchase = h.transaction(for: order)
        purchases[name] = purchase
        try await h.database.execute(
          """
          INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state,
            transaction_id, original_transaction_id)
          VALUES (\(name), 'REFUND_REVERSED',
            \(try JSONCoding.text(try DomainHarness.notification("REFUND_REVERSED", transaction: purchase)))::jsonb,
            'pending', \(purchase.transactionId), \(purchase.originalTransactionId))
          """)
      }
      func states() async throws -> [String: String] {
        var states: [String: String] = [:]
        for row in try await h.database.query(
          "SELECT notification_uuid, state FROM apple_notifications")
        {
          states[try row.decode("notification_uuid")] = try row.decode("state")
        }
        return states
      }
      // The first pass (this instance's full one): both transactions unknown, both wait.
      await service.processPending()
      #expect(try await states() == ["lately": "deferred", "long-ago": "deferred"])
      // Both purchases are settled; each notification is deferred again as if its pass had
      // looked before the settlement committed (the settlement's own wake came too early),
      // one of them an hour ago.
      for (name, purchase) in purchases {
        let tradeNo: String = try #require(
          try await h.database.query(
            "SELECT trade_no FROM orders WHERE user_id = \(name)"
          ).first?.decode("trade_no"))
        _ = try await h.settlement.settle(
          tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
          cause: .report)
      }
      try await h.database.execute(
        """
        UPDATE apple_notifications SET state = 'deferred',
          deferred_at = CASE notification_uuid WHEN 'lately' THEN now()
                             ELSE now() - interval '1 hour' END
        """)
      await service.processPending()
      #expect(try await states() == ["lately": "processed", "long-ago": "deferred"])
      // Another instance's first pass, or this one's an hour on: every deferred one is checked.
      await NotificationService(
        database: h.database, verifier: try SignedDataVerifier(configuration: configuration),
        settlement: h.settlement, catalog: h.catalog, clock: h.clock.clock,
        logger: DomainHarness.logger
      ).processPending()
      #expect(try await states() == ["lately": "processed", "long-ago": "processed"])
    }
  }
}
