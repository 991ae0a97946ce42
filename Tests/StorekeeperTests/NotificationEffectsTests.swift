import AppStore
import Foundation
import Postgres
import Testing

@testable import Storekeeper

@Suite struct NotificationEffectsTests {
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
      #expect(try await Self.apply(h, refund) == .processed("refunded"))
      #expect(try await h.gold("alice") == 0)
      #expect(try await Self.apply(h, refund) == .processed("already_closed"))
      #expect(try await h.gold("alice") == 0)
      let closed = try await h.orders.find(order.tradeNo)
      #expect(closed?.tradeStatus == .tradeClosed && closed?.closeReason == .refunded)

      #expect(
        try await Self.apply(h, Self.stored("REFUND_REVERSED", transaction: purchase))
          == .processed("refund_reversed"))
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
      #expect(try await Self.apply(h, refund) == .deferred("transaction_unknown"))
    }
  }

  @Test func anUnknownTypeIsLeftUnhandledNotProcessed() async throws {
    try await DomainHarness.with { h in
      let outcome = try await Self.apply(h, Self.stored("SOMETHING_APPLE_ADDS_LATER"))
      #expect(outcome.state == .unhandled)
      #expect(try await Self.apply(h, Self.stored("PRICE_INCREASE")) == .processed("no_effect"))
    }
  }
}
