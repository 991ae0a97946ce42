import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Issue 22: a renewal belongs to its subscription's owner, whoever posts it and with whatever
/// proof. The subscriber is credited at once; anyone else gets nothing; the late DID_RENEW
/// credits nothing twice.
@Suite(.database) struct RenewalOwnerTests {
  /// hal's subscription, bought with or without an order's token, and its next period, which
  /// Apple renewed but whose DID_RENEW has not arrived.
  static func subscription(_ h: DomainHarness, token: Bool) async throws -> (
    first: VerifiedTransaction, renewal: VerifiedTransaction
  ) {
    try await h.addProduct("club", type: .autoRenewable, grants: "{\"entitlement\": \"club\"}")
    let order = try await h.newOrder(user: "hal", product: "club")
    let now = h.clock.clock.milliseconds
    var first = h.transaction(for: order)
    if !token { first.appAccountToken = nil }
    first.type = "Auto-Renewable Subscription"
    first.expiresDate = now + 60_000
    let bought = try await h.receipts.apply([first], userId: "hal", productId: nil)
    #expect(bought.transactions.map(\.status) == [.settled])
    var renewal = first
    renewal.transactionId = UUID().uuidString
    renewal.purchaseDate = now + 60_000
    renewal.expiresDate = now + 3_600_000
    return (first, renewal)
  }

  static func clubExpiry(_ h: DomainHarness, _ user: String) async throws -> String? {
    try await h.entitlements.view(userId: user).entitlements.first { $0.entitlement == "club" }?
      .expiresAt
  }

  static func expiry(_ transaction: VerifiedTransaction) throws -> String {
    EventTime.rfc3339(ms: try #require(transaction.expiresDate))
  }

  static func orders(_ h: DomainHarness, _ user: String) async throws -> Int {
    try await h.database.query("SELECT count(*)::int AS n FROM orders WHERE user_id = \(user)")
      .first?.decode("n") ?? -1
  }

  @Test(arguments: [false, true])
  func aRenewalPostedToReceiptsByAnotherUserIsTheSubscribersAtOnce(token: Bool) async throws {
    try await DomainHarness.with { h in
      let (_, renewal) = try await Self.subscription(h, token: token)
      let stolen = try await h.receipts.apply([renewal], userId: "ida", productId: nil)
      #expect(stolen.transactions.map(\.status) == [.notYours])
      #expect(stolen.transactions.first?.tradeNo == nil)
      #expect(stolen.delivery.isEmpty)
      #expect(try await h.entitlements.view(userId: "ida").entitlements.isEmpty)
      #expect(try await Self.orders(h, "ida") == 0)

      let owner = try await NotificationEffectsTests.owner(h, renewal.transactionId)
      #expect(owner.userId == "hal")
      let tradeNo = try #require(owner.tradeNo)
      let paid = try #require(try await h.orders.find(tradeNo))
      #expect(paid.origin == .renewal && paid.tradeStatus == .tradeSuccess)
      #expect(try await Self.clubExpiry(h, "hal") == (try Self.expiry(renewal)))

      // The late notification confirms the dates and credits nothing again.
      let didRenew = try DomainHarness.notification("DID_RENEW", transaction: renewal)
      #expect(try await h.apply(didRenew) == .processed(.datesUpdated))
      #expect(try await Self.orders(h, "hal") == 2)
      #expect(try await NotificationEffectsTests.owner(h, renewal.transactionId).userId == "hal")
      #expect(try await h.entitlements.view(userId: "ida").entitlements.isEmpty)
    }
  }

  @Test(arguments: [false, true])
  func aRenewalReportedOnAnotherUsersOwnOrderPaysNothingAndIsTheSubscribers(token: Bool)
    async throws
  {
    try await DomainHarness.with { h in
      let (_, renewal) = try await Self.subscription(h, token: token)
      let mine = try await h.newOrder(user: "ida", product: "club")
      let report = TradeReport.paid(
        tradeNo: mine.tradeNo, proof: .signedTransaction(try h.signed(renewal)))
      await #expect(throws: SettlementRefusal.purchaseNotYours) {
        _ = try await h.processor.process(report, actingUser: "ida", logger: DomainHarness.logger)
      }
      #expect(try await h.orders.find(mine.tradeNo)?.tradeStatus == .waitBuyerPay)
      #expect(try await h.entitlements.view(userId: "ida").entitlements.isEmpty)
      let owner = try await NotificationEffectsTests.owner(h, renewal.transactionId)
      #expect(owner.userId == "hal")
      #expect(try await Self.clubExpiry(h, "hal") == (try Self.expiry(renewal)))

      // Again, and after its notification: still nothing for ida, nothing twice for hal.
      await #expect(throws: SettlementRefusal.purchaseNotYours) {
        _ = try await h.processor.process(report, actingUser: "ida", logger: DomainHarness.logger)
      }
      let didRenew = try DomainHarness.notification("DID_RENEW", transaction: renewal)
      #expect(try await h.apply(didRenew) == .processed(.datesUpdated))
      #expect(try await Self.orders(h, "hal") == 2)
      #expect(try await h.orders.find(mine.tradeNo)?.tradeStatus == .waitBuyerPay)
    }
  }

  /// Kept without an owner before this rule (its poster was told `not_yours`): the subscriber's
  /// own post of it gives it to them, like its notification would.
  @Test func aRenewalKeptWithoutAnOwnerIsGivenToTheSubscriberWhoPostsIt() async throws {
    try await DomainHarness.with { h in
      let (_, renewal) = try await Self.subscription(h, token: false)
      _ = try await h.database.withTransaction { tx in
        try await TransactionRecord.recordUnowned(renewal, source: .signedTransaction, on: tx)
      }
      let posted = try await h.receipts.apply([renewal], userId: "hal", productId: nil)
      #expect(posted.transactions.map(\.status) == [.settled])
      #expect(posted.delivery.map(\.newlyGranted) == [true])
      #expect(try await NotificationEffectsTests.owner(h, renewal.transactionId).userId == "hal")
      #expect(try await Self.clubExpiry(h, "hal") == (try Self.expiry(renewal)))
      let again = try await h.receipts.apply([renewal], userId: "hal", productId: nil)
      #expect(again.transactions.map(\.status) == [.restored])
    }
  }

  /// Nobody owns the subscription yet: the old rules hold, and its first poster of a token-less
  /// renewal is its owner.
  @Test func aRenewalOfASubscriptionNobodyOwnsFollowsTheOrdinaryRules() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct("club", type: .autoRenewable, grants: "{\"entitlement\": \"club\"}")
      let order = try await h.newOrder(user: "hal", product: "club")
      var renewal = h.transaction(for: order, token: nil)
      renewal.appAccountToken = nil
      renewal.originalTransactionId = UUID().uuidString
      renewal.type = "Auto-Renewable Subscription"
      renewal.expiresDate = h.clock.clock.milliseconds + 3_600_000
      let kept = try await h.receipts.apply([renewal], userId: nil, productId: nil)
      #expect(kept.transactions.map(\.status) == [.recorded])
      #expect(try await NotificationEffectsTests.owner(h, renewal.transactionId).userId == nil)
    }
  }
}
