import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

@Suite(.database) struct NotificationEffectsTests {
  /// A verified notification as `NotificationService` stores it.
  static func stored(_ type: String, transaction: VerifiedTransaction? = nil) throws
    -> StoredNotification
  {
    var document: [String: Any] = [
      "notification": [
        "notificationType": type, "notificationUUID": UUID().uuidString, "version": "2.0",
      ]
    ]
    if let transaction {
      document["transaction"] = [
        "transactionId": transaction.transactionId,
        "originalTransactionId": transaction.originalTransactionId,
        "bundleId": transaction.bundleId, "productId": transaction.productId,
        "purchaseDate": transaction.purchaseDate, "quantity": transaction.quantity,
        "type": transaction.type ?? "Consumable", "environment": transaction.environment,
        "revocationDate": Int64(Date().timeIntervalSince1970 * 1000), "revocationReason": 0,
      ]
    }
    let data = try JSONSerialization.data(withJSONObject: document)
    return try JSONDecoder().decode(StoredNotification.self, from: data)
  }

  static func apply(_ h: DomainHarness, _ stored: StoredNotification) async throws
    -> NotificationOutcome
  {
    try await h.database.withTransaction { tx in
      try await NotificationEffects(
        settlement: h.settlement, catalog: h.catalog, clock: h.clock.clock, tx: tx, uuid: "n"
      ).apply(stored)
    }
  }

  @Test func aRefundTakesBackWhatWasGrantedOnceAndItsReversalGivesItBack() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
        cause: .report)
      #expect(try await h.gold("alice") == 100)

      let refund = try Self.stored("REFUND", transaction: purchase)
      #expect(try await Self.apply(h, refund) == .processed(.refunded))
      #expect(try await h.gold("alice") == 0)
      #expect(try await Self.apply(h, refund) == .processed(.alreadyClosed))
      #expect(try await h.gold("alice") == 0)
      let closed = try await h.orders.find(order.tradeNo)
      #expect(closed?.tradeStatus == .tradeClosed && closed?.closeReason == .refunded)

      #expect(
        try await Self.apply(h, Self.stored("REFUND_REVERSED", transaction: purchase))
          == .processed(.refundReversed))
      #expect(try await h.gold("alice") == 100)
      #expect(
        try await h.events(order.tradeNo) == ["created", "paid", "refunded", "refund_reversed"])
    }
  }

  @Test func aRefundOfAnUnknownTransactionWaits() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let refund = try Self.stored("REFUND", transaction: h.transaction(for: order))
      #expect(try await Self.apply(h, refund) == .deferred(.transactionUnknown))
    }
  }

  @Test func anUnknownTypeIsLeftUnhandledNotProcessed() async throws {
    try await DomainHarness.with { h in
      let outcome = try await Self.apply(h, Self.stored("SOMETHING_APPLE_ADDS_LATER"))
      #expect(outcome.state == .unhandled)
      #expect(try await Self.apply(h, Self.stored("PRICE_INCREASE")) == .processed(.noEffect))
    }
  }

  /// Who owns a recorded transaction, and which order it pays.
  static func owner(_ h: DomainHarness, _ transactionId: String) async throws -> (
    userId: String?, tradeNo: String?
  ) {
    let row = try #require(
      try await h.database.query(
        "SELECT user_id, trade_no FROM apple_transactions WHERE transaction_id = \(transactionId)"
      ).first)
    return (try row.decodeIfPresent("user_id"), try row.decodeIfPresent("trade_no"))
  }

  static func keepUnowned(_ h: DomainHarness, _ transaction: VerifiedTransaction) async throws {
    _ = try await h.database.withTransaction { tx in
      try await TransactionRecord.recordUnowned(transaction, source: .signedTransaction, on: tx)
    }
  }

  /// A renewal kept without an owner (before issue 22, another user posting it first left it
  /// so) must not cost the subscriber the period: its notification gives it to them, with an
  /// order of its own, exactly once; a subscription nobody owns gives it to nobody.
  @Test func aRenewalAnotherUserPostedFirstIsCreditedToTheSubscriberByItsNotification()
    async throws
  {
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
      try await Self.keepUnowned(h, renewal)

      let didRenew = try DomainHarness.notification("DID_RENEW", transaction: renewal)
      #expect(try await h.apply(didRenew) == .processed(.renewalRecorded))
      let owner = try await Self.owner(h, renewal.transactionId)
      #expect(owner.userId == "hal")
      let tradeNo = try #require(owner.tradeNo)
      let paid = try #require(try await h.orders.find(tradeNo))
      #expect(paid.origin == .renewal && paid.userId == "hal" && paid.tradeStatus == .tradeSuccess)
      let club = { try await h.entitlements.view(userId: "hal").entitlements.first?.expiresAt }
      #expect(try await club() == EventTime.rfc3339(ms: now + 3_600_000))
      #expect(try await h.entitlements.view(userId: "ida").entitlements.isEmpty)
      // Delivered again: the period is hal's once, on the same order.
      #expect(try await h.apply(didRenew) == .processed(.datesUpdated))
      #expect(try await Self.owner(h, renewal.transactionId).tradeNo == paid.tradeNo)

      // Whichever notification comes first: an extension of such a renewal gives it too.
      var later = renewal
      later.transactionId = UUID().uuidString
      later.purchaseDate = now + 3_600_000
      later.expiresDate = now + 7_200_000
      try await Self.keepUnowned(h, later)
      #expect(
        try await h.apply(DomainHarness.notification("RENEWAL_EXTENDED", transaction: later))
          == .processed(.renewalRecorded))
      #expect(try await Self.owner(h, later.transactionId).userId == "hal")
      #expect(try await club() == EventTime.rfc3339(ms: now + 7_200_000))

      // A subscription kept without an owner: its renewal waits for one, given to nobody.
      var lone = h.transaction(for: order, token: nil)
      lone.appAccountToken = nil
      lone.type = "Auto-Renewable Subscription"
      lone.expiresDate = now + 60_000
      var loneRenewal = lone
      loneRenewal.transactionId = UUID().uuidString
      loneRenewal.expiresDate = now + 3_600_000
      _ = try await h.receipts.apply([lone, loneRenewal], userId: nil, productId: nil)
      #expect(
        try await h.apply(DomainHarness.notification("DID_RENEW", transaction: loneRenewal))
          == .deferred(.originalTransactionUnknown))
      #expect(try await Self.owner(h, loneRenewal.transactionId).userId == nil)
    }
  }
}
