import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Each kind of change writes its events in its own transaction: the right types, gap-free
/// sequence numbers, and the user's state after the change exactly as the entitlements
/// endpoint shows it.
@Suite(.database) struct EventTests {
  private struct Abort: Error {}

  @Test func aPaymentWritesOrderPaidAndBalanceChangedInTheSettlingStatement() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(quantity: 2)
      let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
      _ = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: proof), logger: DomainHarness.logger)
      let events = try await h.writtenEvents("alice")
      #expect(events.map(\.type) == ["order.paid", "balance.changed"])
      #expect(events.map(\.sequence) == [1, 2])
      let now = try await h.stateNow("alice")
      #expect(events.allSatisfy { $0.state == now })
      #expect(now.contains("\"gold\":200"))
      guard case .object(let paid) = events[0].data, case .object(let balance) = events[1].data
      else { throw Abort() }
      #expect(paid["trade_no"] == .string(order.tradeNo))
      #expect(paid["reason"] == .string("paid") && paid["cause"] == .string("report"))
      #expect(balance["changes"] == .object(["gold": .number("200")]))
      // The same report again changes nothing and writes nothing.
      _ = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: proof), logger: DomainHarness.logger)
      #expect(try await h.writtenEvents("alice").count == 2)
    }
  }

  @Test func aRolledBackChangeWritesNoEventAndTakesNoNumber() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let product = try await h.product()
      let purchase = h.transaction(for: order)
      await #expect(throws: Abort.self) {
        try await h.database.withTransaction { tx in
          guard
            let (locked, _, _) = try await h.orders.lockForSettlement(
              order.tradeNo, transactionIds: [purchase.transactionId], on: tx)
          else { throw HarnessFailure() }
          _ = try await h.settlement.settleLocked(
            locked, product: product, transaction: purchase, source: .signedTransaction,
            cause: .report, record: nil, on: tx)
          #expect(try await tx.query("SELECT 1 FROM events").count == 2)
          throw Abort()
        }
      }
      #expect(try await h.writtenEvents("alice").isEmpty)
      #expect(try await h.gold("alice") == 0)
      _ = try await h.settlement.settle(
        order.tradeNo, product: product, transactions: [purchase], record: nil, cause: .report)
      #expect(try await h.writtenEvents("alice").map(\.sequence) == [1, 2])
    }
  }

  @Test func sequencesStayGapFreeAndEachStateIncludesEveryEarlierChange() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let product = try await h.product()
      var orders: [Order] = []
      for _ in 0..<16 { orders.append(try await h.newOrder()) }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for order in orders {
          group.addTask {
            _ = try await h.settlement.settle(
              order.tradeNo, product: product, transactions: [h.transaction(for: order)],
              record: nil, cause: .report)
          }
        }
        try await group.waitForAll()
      }
      let events = try await h.writtenEvents("alice")
      #expect(events.map(\.sequence) == Array(1...32))
      // The n-th balance change in sequence order sees exactly n purchases: a state never
      // misses a change numbered before it, nor shows one numbered after it.
      let balances = events.filter { $0.type == "balance.changed" }.map(\.state)
      for (index, state) in balances.enumerated() {
        #expect(state.contains("\"gold\":\((index + 1) * 100)"))
      }
      #expect(events.last?.state == (try await h.stateNow("alice")))
    }
  }

  @Test func aRefundAndItsReversalWriteTheirEventsOnce() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      var purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
        cause: .report)
      purchase.revocationDate = h.clock.clock.milliseconds
      let refund = try DomainHarness.notification("REFUND", transaction: purchase)
      #expect(try await h.apply(refund) == .processed(.refunded))
      #expect(try await h.apply(refund) == .processed(.alreadyClosed))
      purchase.revocationDate = nil
      #expect(
        try await h.apply(DomainHarness.notification("REFUND_REVERSED", transaction: purchase))
          == .processed(.refundReversed))
      let events = try await h.writtenEvents("alice")
      #expect(
        events.map(\.type) == [
          "order.paid", "balance.changed", "purchase.refunded", "order.closed", "balance.changed",
          "purchase.refund_reversed", "order.reopened", "balance.changed",
        ])
      #expect(events.map(\.sequence) == Array(1...8))
      #expect(events[4].state.contains("\"gold\":0"))
      #expect(events[7].state == (try await h.stateNow("alice")))
      guard case .object(let refunded) = events[2].data,
        case .object(let balance) = events[4].data,
        case .object(let cause) = balance["cause"]
      else { throw Abort() }
      #expect(refunded["transaction_id"] == .string(purchase.transactionId))
      #expect(refunded["trade_no"] == .string(order.tradeNo))
      #expect(balance["changes"] == .object(["gold": .number("-100")]))
      #expect(cause["type"] == .string("purchase.refunded"))
    }
  }

  @Test func anAdminTransferWritesForBothUsers() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
        cause: .report)
      _ = try await TransferService(settlement: h.settlement, catalog: h.catalog).transfer(
        purchase.transactionId, to: "bob", by: "ops", reason: "support ticket")
      let alice = try await h.writtenEvents("alice")
      let bob = try await h.writtenEvents("bob")
      #expect(
        alice.map(\.type) == [
          "order.paid", "balance.changed", "admin.transfer", "order.closed", "balance.changed",
        ])
      #expect(bob.map(\.type) == ["admin.transfer", "order.paid", "balance.changed"])
      #expect(alice.last?.state == (try await h.stateNow("alice")))
      #expect(bob.last?.state == (try await h.stateNow("bob")))
      guard case .object(let moved) = bob[0].data else { throw Abort() }
      #expect(moved["from_user_id"] == .string("alice") && moved["admin"] == .string("ops"))
    }
  }

  @Test func expiredOrdersClosedByTheSweepWriteOrderClosed() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      #expect(try await h.orders.closeExpired(now: Date().addingTimeInterval(7200)) == 1)
      let events = try await h.writtenEvents("alice")
      #expect(events.map(\.type) == ["order.closed"])
      guard case .object(let closed) = events.first?.data else { throw Abort() }
      #expect(closed["trade_no"] == .string(order.tradeNo))
      #expect(closed["close_reason"] == .string("expired"))
    }
  }

  @Test func anEntitlementIsGrantedExtendedAndReportedExpiredOnce() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct(
        "vip.30", type: .nonRenewing, grants: #"{"entitlement": "vip", "duration_days": 30}"#)
      let product = try await h.product("vip.30")
      for _ in 0..<2 {
        let order = try await h.newOrder(product: "vip.30")
        _ = try await h.settlement.settle(
          order.tradeNo, product: product, transactions: [h.transaction(for: order)],
          record: nil, cause: .report)
      }
      #expect(
        try await h.writtenEvents("alice").map(\.type) == [
          "order.paid", "entitlement.granted", "order.paid", "entitlement.extended",
        ])
      #expect(try await h.orders.outbox.sweepExpired(on: h.database) == 0)
      h.clock.advance(by: 61 * 86_400)
      #expect(try await h.orders.outbox.sweepExpired(on: h.database) == 1)
      #expect(try await h.orders.outbox.sweepExpired(on: h.database) == 0)
      let events = try await h.writtenEvents("alice")
      #expect(events.last?.type == "entitlement.expired")
      #expect(events.last?.sequence == 5)
      #expect(events.last?.state == (try await h.stateNow("alice")))
      #expect(!(events.last?.state.contains("vip\"") ?? true))
    }
  }

  @Test func subscriptionNotificationsWriteRenewalBillingProblemExpiryAndConsumption()
    async throws
  {
    try await DomainHarness.with { h in
      try await h.addProduct(
        "vip.month", type: .autoRenewable, grants: #"{"entitlement": "vip"}"#)
      let order = try await h.newOrder(product: "vip.month")
      let now = h.clock.clock.milliseconds
      var first = h.transaction(for: order)
      first.type = "Auto-Renewable Subscription"
      first.expiresDate = now + 30 * 86_400_000
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product("vip.month"), transactions: [first],
        record: nil, cause: .report)
      var renewal = first
      renewal.transactionId = UUID().uuidString
      renewal.appAccountToken = nil
      renewal.purchaseDate = first.expiresDate ?? now
      renewal.expiresDate = now + 60 * 86_400_000
      #expect(
        try await h.apply(DomainHarness.notification("DID_RENEW", transaction: renewal))
          == .processed(.renewalRecorded))
      #expect(
        try await h.apply(
          DomainHarness.notification(
            "DID_FAIL_TO_RENEW", originalTransactionId: first.originalTransactionId))
          == .processed(.billingRetry))
      #expect(
        try await h.apply(
          DomainHarness.notification(
            "EXPIRED", subtype: "BILLING_RETRY", originalTransactionId: first.originalTransactionId)
        ) == .processed(.expired))
      #expect(
        try await h.apply(DomainHarness.notification("CONSUMPTION_REQUEST", transaction: first))
          == .processed(.listedForAdmins))
      let events = try await h.writtenEvents("alice")
      #expect(
        events.map(\.type) == [
          "order.paid", "entitlement.granted", "subscription.renewed", "order.paid",
          "entitlement.extended", "subscription.billing_problem", "subscription.expired",
          "consumption.requested",
        ])
      #expect(events.map(\.sequence) == Array(1...8))
      #expect(events.last?.state == (try await h.stateNow("alice")))
      guard case .object(let extended) = events[4].data,
        case .object(let cause) = extended["cause"]
      else { throw Abort() }
      #expect(cause["type"] == .string("subscription.renewed"))
    }
  }

  @Test func anAppendWithoutEventsOfItsOwnWritesOnlyWhatChanged() async throws {
    try await DomainHarness.with { h in
      let outbox = h.orders.outbox
      #expect(try await outbox.append([], for: "carol", on: h.database) == 0)
      try await h.database.withTransaction { tx in
        try await tx.execute(
          """
          INSERT INTO ledger (user_id, asset, amount, kind, environment)
          VALUES ('carol', 'gold', 50, 'grant', 'Production')
          """)
        #expect(
          try await outbox.append(
            [EventDraft(.adminAdjustment, ["admin": .string("ops")])], for: "carol", on: tx) == 2)
      }
      let events = try await h.writtenEvents("carol")
      #expect(events.map(\.type) == ["admin.adjustment", "balance.changed"])
      #expect(events.last?.state == (try await h.stateNow("carol")))
    }
  }
}

private struct HarnessFailure: Error {}
