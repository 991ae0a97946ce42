import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Issue 10's ownership rules, through the domain: a purchase is credited to one user only.
@Suite(.database) struct OwnershipTests {
  static func statuses(_ outcome: ReceiptOutcome) -> [ReceiptOutcome.Status] {
    outcome.transactions.map(\.status)
  }

  @Test func aPurchaseMadeForAnOrderCreditsOnlyThatOrdersUser() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "alice")
      let purchase = h.transaction(for: order)
      let stolen = try await h.receipts.apply([purchase], userId: "mallory", productId: nil)
      #expect(Self.statuses(stolen) == [.notYours])
      #expect(stolen.transactions.first?.tradeNo == nil)
      #expect(stolen.delivery.isEmpty)
      #expect(try await h.gold("mallory") == 0)

      let mine = try await h.receipts.apply([purchase], userId: "alice", productId: nil)
      #expect(Self.statuses(mine) == [.settled])
      #expect(mine.transactions.first?.tradeNo == order.tradeNo)
      #expect(mine.delivery.map(\.newlyGranted) == [true])
      #expect(try await h.gold("alice") == 100)

      let again = try await h.receipts.apply([purchase], userId: "alice", productId: nil)
      #expect(Self.statuses(again) == [.restored])
      #expect(again.delivery.map(\.newlyGranted) == [false])
      #expect(
        Self.statuses(try await h.receipts.apply([purchase], userId: "mallory", productId: nil))
          == [.notYours])
      #expect(try await h.gold("alice") == 100)
      #expect(try await h.gold("mallory") == 0)
    }
  }

  /// A receipt post settles the order its purchase names only if the purchase is what that
  /// order asked for, as a report must: else an order for ten, or for a dearer product, would be
  /// paid by one cheap purchase made with its token.
  @Test func aPurchaseForAnOrderPaysItOnlyIfItIsWhatTheOrderAskedFor() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      try await h.addProduct("vip", type: .nonConsumable, grants: "{\"entitlement\": \"vip\"}")
      let ten = try await h.newOrder(user: "mallory", quantity: 10)
      let one = h.transaction(for: ten, quantity: 1)
      let short = try await h.receipts.apply([one], userId: "mallory", productId: nil)
      #expect(Self.statuses(short) == [.refused])
      #expect(short.transactions.first?.code == "quantity_mismatch")
      #expect(short.delivery.isEmpty)
      #expect(try await h.gold("mallory") == 0)
      #expect(try await h.orders.find(ten.tradeNo)?.tradeStatus == .waitBuyerPay)

      let vip = try await h.newOrder(user: "mallory", product: "vip")
      let cheap = h.transaction(for: vip, productId: "gold.100")
      let swapped = try await h.receipts.apply([cheap], userId: "mallory", productId: nil)
      #expect(Self.statuses(swapped) == [.refused])
      #expect(swapped.transactions.first?.code == "product_mismatch")
      #expect(try await h.entitlements.view(userId: "mallory").nonConsumables.isEmpty)
      #expect(try await h.orders.find(vip.tradeNo)?.tradeStatus == .waitBuyerPay)
      #expect(try await h.gold("mallory") == 0)

      // The purchase that matches its order still pays it.
      let right = h.transaction(for: ten)
      let paid = try await h.receipts.apply([right], userId: "mallory", productId: nil)
      #expect(Self.statuses(paid) == [.settled])
      #expect(try await h.gold("mallory") == 1000)
    }
  }

  @Test func aPurchaseWithoutATokenBelongsToWhoeverItFirstSettledFor() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "bob")
      var purchase = h.transaction(for: order)
      purchase.appAccountToken = nil
      let first = try await h.receipts.apply([purchase], userId: "bob", productId: nil)
      #expect(Self.statuses(first) == [.settled])
      let other = try await h.receipts.apply([purchase], userId: "mallory", productId: nil)
      #expect(Self.statuses(other) == [.notYours])
      #expect(try await h.gold("bob") == 100)
      #expect(try await h.gold("mallory") == 0)
    }
  }

  @Test func aPostNamingNoUserLeavesNothingClaimableButByItsOrder() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "carol")
      var anonymous = h.transaction(for: order)
      anonymous.appAccountToken = nil
      let recorded = try await h.receipts.apply([anonymous], userId: nil, productId: nil)
      #expect(Self.statuses(recorded) == [.recorded])
      // Later, anyone holding the receipt: refused; nothing credited.
      #expect(
        Self.statuses(try await h.receipts.apply([anonymous], userId: "mallory", productId: nil))
          == [.notYours])
      #expect(
        Self.statuses(try await h.receipts.apply([anonymous], userId: "carol", productId: nil))
          == [.notYours])

      // One that carries an order's token is claimed by that order's own report.
      let second = try await h.newOrder(user: "carol")
      let bought = h.transaction(for: second)
      _ = try await h.receipts.apply([bought], userId: nil, productId: nil)
      let settled = try await h.settlement.settle(
        second.tradeNo, product: try await h.product(), transactions: [bought], record: nil,
        cause: .report)
      #expect(settled.order.tradeStatus == .tradeSuccess)
      #expect(try await h.gold("carol") == 100)
      #expect(try await h.gold("mallory") == 0)
    }
  }

  @Test func anAdminTransferMovesThePurchaseAndItsCreditOnce() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "dave", quantity: 2)
      let purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
        cause: .report)
      let transfers = TransferService(settlement: h.settlement, catalog: h.catalog)
      let moved = try await transfers.transfer(
        purchase.transactionId, to: "erin", by: "ops", reason: "account merge")
      #expect(moved.fromTradeNo == order.tradeNo)
      #expect(moved.order.userId == "erin" && moved.order.origin == .transfer)
      #expect(moved.order.tradeStatus == .tradeSuccess)
      #expect(try await h.gold("dave") == 0)
      #expect(try await h.gold("erin") == 200)
      let old = try #require(try await h.orders.find(order.tradeNo))
      #expect(old.closeReason == .transferred && old.transactionId == nil)
      #expect(try await h.events(order.tradeNo) == ["created", "paid", "transferred"])
      await #expect(throws: TransferRefusal.alreadyOwned) {
        _ = try await transfers.transfer(purchase.transactionId, to: "erin", by: "ops", reason: nil)
      }
      await #expect(throws: TransferRefusal.transactionNotFound("nope")) {
        _ = try await transfers.transfer("nope", to: "erin", by: "ops", reason: nil)
      }
      // The new owner's receipt restores it; the old owner's does not.
      #expect(
        Self.statuses(try await h.receipts.apply([purchase], userId: "erin", productId: nil))
          == [.restored])
      #expect(
        Self.statuses(try await h.receipts.apply([purchase], userId: "dave", productId: nil))
          == [.notYours])
    }
  }

  /// An order whose purchase an admin moved away is closed for good, as a refunded one is, but
  /// Apple refunded nothing: a later report, or a purchase posted with its token, says so.
  @Test func anOrderWhosePurchaseWasTransferredIsRefusedAsTransferredNotRefunded() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let product = try await h.product()
      let order = try await h.newOrder(user: "dave")
      let purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: product, transactions: [purchase], record: nil, cause: .report)
      _ = try await TransferService(settlement: h.settlement, catalog: h.catalog).transfer(
        purchase.transactionId, to: "erin", by: "ops", reason: nil)

      let refusal = SettlementRefusal.orderTransferred(tradeNo: order.tradeNo)
      await #expect(throws: refusal) {
        _ = try await h.settlement.settle(
          order.tradeNo, product: product, transactions: [purchase], record: nil, cause: .report)
      }
      #expect(refusal.code == "order_transferred")
      #expect(!refusal.detail.contains("refund"))
      let another = try await h.receipts.apply(
        [h.transaction(for: order)], userId: "dave", productId: nil)
      #expect(another.transactions.map(\.code) == ["order_transferred"])
      #expect(try await h.gold("dave") == 0)
      #expect(try await h.gold("erin") == 100)
    }
  }

  @Test func aRefundTakesBackWhatWasCreditedEvenAfterTheGrantsWereEdited() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "fay")
      let purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
        cause: .report)
      try await h.database.execute(
        "UPDATE products SET grants = '{\"balance\": {\"gold\": 999}}' WHERE product_id = 'gold.100'"
      )
      let refund = try NotificationEffectsTests.stored("REFUND", transaction: purchase)
      _ = try await NotificationEffectsTests.apply(h, refund)
      #expect(try await h.gold("fay") == 0)
    }
  }

  /// A StoreKit 2 transaction kept from before Apple refunded it does not say so; the refund the
  /// notification recorded does. Posted again, it is revoked: no content, no restore.
  @Test func aRefundedPurchasePostedAgainWithItsOldProofIsRevokedNotRestored() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct("vip", type: .nonConsumable, grants: "{\"entitlement\": \"vip\"}")
      let order = try await h.newOrder(user: "gus", product: "vip")
      let purchase = h.transaction(for: order)
      let bought = try await h.receipts.apply([purchase], userId: "gus", productId: nil)
      #expect(Self.statuses(bought) == [.settled])
      _ = try await NotificationEffectsTests.apply(
        h, try NotificationEffectsTests.stored("REFUND", transaction: purchase))

      let again = try await h.receipts.apply([purchase], userId: "gus", productId: nil)
      #expect(Self.statuses(again) == [.revoked])
      #expect(again.delivery.isEmpty)
      #expect(try await h.entitlements.view(userId: "gus").nonConsumables.isEmpty)

      // Apple's reversal gives it back: restored again.
      _ = try await NotificationEffectsTests.apply(
        h, try NotificationEffectsTests.stored("REFUND_REVERSED", transaction: purchase))
      let reinstated = try await h.receipts.apply([purchase], userId: "gus", productId: nil)
      #expect(Self.statuses(reinstated) == [.restored])
      #expect(reinstated.delivery.map(\.productId) == ["vip"])
    }
  }

  /// Apple copies the token of the order that bought a subscription to every renewal. Posted,
  /// a renewal pays an order of its own for the subscriber (as its notification would), instead
  /// of meeting that paid order and being refused, so the period paid for is not lost.
  @Test func aRenewalPostedWithItsSubscriptionsTokenIsRecordedForItsSubscriber() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct(
        "club", type: .autoRenewable, grants: "{\"entitlement\": \"club\"}")
      let order = try await h.newOrder(user: "hal", product: "club")
      let now = h.clock.clock.milliseconds
      var first = h.transaction(for: order)
      first.type = "Auto-Renewable Subscription"
      first.expiresDate = now + 60_000
      #expect(
        Self.statuses(try await h.receipts.apply([first], userId: "hal", productId: nil)) == [
          .settled
        ])
      var renewal = first
      renewal.transactionId = UUID().uuidString
      renewal.purchaseDate = now + 60_000
      renewal.expiresDate = now + 3_600_000

      #expect(
        Self.statuses(try await h.receipts.apply([renewal], userId: "ida", productId: nil)) == [
          .notYours
        ])
      // ida's post already gave it to hal (issue 22): his own finds it his.
      let posted = try await h.receipts.apply([renewal], userId: "hal", productId: nil)
      #expect(Self.statuses(posted) == [.restored])
      let tradeNo = try #require(posted.transactions.first?.tradeNo)
      let paid = try #require(try await h.orders.find(tradeNo))
      #expect(paid.origin == .renewal && paid.transactionId == renewal.transactionId)
      let club = try await h.entitlements.view(userId: "hal").entitlements.first
      #expect(club?.expiresAt == EventTime.rfc3339(ms: now + 3_600_000))
      // Once is enough: posted again it is restored, and nobody else's.
      #expect(
        Self.statuses(try await h.receipts.apply([renewal], userId: "hal", productId: nil)) == [
          .restored
        ])
    }
  }

  @Test func sandboxPurchasesCreditOnlyWhenThePolicySaysAndAreShownAsSuch() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var recordOnly = h.settlement
      recordOnly.sandboxCredits = false
      let order = try await h.newOrder(user: "gus")
      var sandbox = h.transaction(for: order)
      sandbox.environment = "Sandbox"
      let paid = try await recordOnly.settle(
        order.tradeNo, product: try await h.product(), transactions: [sandbox], record: nil,
        cause: .report)
      #expect(paid.order.tradeStatus == .tradeSuccess && paid.order.environment == "Sandbox")
      #expect(try await h.gold("gus") == 0)

      let credited = try await h.newOrder(user: "gus")
      var second = h.transaction(for: credited)
      second.environment = "Sandbox"
      _ = try await h.settlement.settle(
        credited.tradeNo, product: try await h.product(), transactions: [second], record: nil,
        cause: .report)
      let view = try await h.entitlements.view(userId: "gus")
      #expect(view.balances["gold"] == 100 && view.sandboxBalances["gold"] == 100)
    }
  }
}
