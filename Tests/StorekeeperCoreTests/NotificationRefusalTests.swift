import AppStore
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A notification the database refuses while it is applied: for a state of the server that
/// passes (a lock or statement timeout, a full disk, a node a failover made read-only) it stays
/// pending and is applied by a later pass; for anything doing it again would only repeat, it
/// is kept as failed. Nothing but the service would ever apply it: Apple's redelivery is a
/// duplicate by then. The refusals are raised by a trigger on the order's update, with each
/// SQLSTATE as PostgreSQL itself would raise it.
// One case at a time: each opens a harness of its own, and run side by side with the rest of
// the suite they took the test server past its 200 connections.
@Suite(.serialized, .database) struct NotificationRefusalTests {
  private func service(_ h: DomainHarness) throws -> NotificationService {
    var configuration = AppStoreConfiguration(bundleId: DomainHarness.bundleId)
    configuration.extraRootCertificatesPEM = [h.authority.rootCertificatePEM]
    return NotificationService(
      database: h.database, verifier: try SignedDataVerifier(configuration: configuration),
      settlement: h.settlement, catalog: h.catalog, clock: h.clock.clock,
      logger: DomainHarness.logger)
  }

  /// Alice's paid order for 100 gold and a pending REFUND of it, named `uuid`.
  private func paidWithRefundPending(_ h: DomainHarness, uuid: String) async throws -> Order {
    try await h.addConsumable()
    let order = try await h.newOrder()
    let purchase = h.transaction(for: order)
    _ = try await h.settlement.settle(
      order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
      cause: .report)
    let refund = try DomainHarness.notification("REFUND", transaction: purchase)
    try await h.database.execute(
      """
      INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state)
      VALUES (\(uuid), 'REFUND', \(try JSONCoding.text(refund))::jsonb, 'pending')
      """)
    return order
  }

  /// Every update of an order fails with `sqlState` until `allow` is called.
  private func refuseOrderUpdates(_ h: DomainHarness, with sqlState: String) async throws {
    try await h.database.execute(
      PostgresQuery(
        unsafeSQL: """
          CREATE OR REPLACE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '\(sqlState)'; END $$
          """))
    try await h.database.execute(
      """
      CREATE OR REPLACE TRIGGER test_refuse BEFORE UPDATE ON orders
        FOR EACH ROW EXECUTE FUNCTION test_refuse()
      """)
  }

  private func allow(_ h: DomainHarness) async throws {
    try await h.database.execute("DROP TRIGGER test_refuse ON orders")
  }

  private func row(_ h: DomainHarness, _ uuid: String) async throws -> (String, Int32, String) {
    let row = try #require(
      try await h.database.query(
        "SELECT state, attempts, result FROM apple_notifications WHERE notification_uuid = \(uuid)"
      ).first)
    return (
      try row.decode("state"), try row.decode("attempts"),
      try row.decodeIfPresent("result", as: String.self) ?? ""
    )
  }

  @Test(arguments: ["55P03", "57014", "53100", "25006", "58030"])
  func aRefundRefusedForAPassingReasonStaysPendingAndIsAppliedOnceItPasses(_ sqlState: String)
    async throws
  {
    try await DomainHarness.with { h in
      let order = try await paidWithRefundPending(h, uuid: "refund")
      let service = try service(h)
      try await refuseOrderUpdates(h, with: sqlState)
      // More passes than a conflict is allowed: a refusal that lasts is still no fault of
      // the notification's.
      for _ in 0..<(NotificationService.conflictAttempts + 1) { await service.processPending() }
      let (state, attempts, result) = try await row(h, "refund")
      #expect(state == "pending")
      #expect(attempts == Int32(NotificationService.conflictAttempts + 1))
      #expect(result.contains(sqlState), "\(result)")
      #expect(try await h.gold("alice") == 100)

      try await allow(h)
      await service.processPending()
      #expect(try await row(h, "refund").0 == "processed")
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .tradeClosed)
      #expect(try await h.gold("alice") == 0)
    }
  }

  @Test(arguments: ["23514", "P0001"])
  func aRefundRefusedForGoodIsKeptAsFailed(_ sqlState: String) async throws {
    try await DomainHarness.with { h in
      let order = try await paidWithRefundPending(h, uuid: "refund")
      try await refuseOrderUpdates(h, with: sqlState)
      try await service(h).processPending()
      let (state, attempts, result) = try await row(h, "refund")
      #expect(state == "failed")
      #expect(attempts == 1)
      #expect(result.contains(sqlState), "\(result)")
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .tradeSuccess)
    }
  }
}
