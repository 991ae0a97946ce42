import AppStore
import Testing

@testable import StorekeeperCore

/// Audit storekit2, finding 1: which order a period of the user's own subscription, carrying
/// the token of the order that began it, pays when it is reported on another order. Pure: the
/// order and the period are all it reads.
@Suite struct OwnPeriodOrderTests {
  /// 2026-11-29T15:22:08.477Z, when `OrderJSONTests.order()` was made.
  static let madeAt: Int64 = 1_795_965_728_477

  static func period(boughtAt: Int64, quantity: Int = 3) -> VerifiedTransaction {
    VerifiedTransaction(
      transactionId: "2000000000000002", originalTransactionId: "2000000000000001",
      bundleId: "com.example", productId: "com.example.gold", quantity: quantity,
      purchaseDate: boughtAt, appAccountToken: "11111111-1111-4111-8111-111111111111",
      environment: "Production")
  }

  /// An order for 3 of com.example.gold, waiting for payment.
  static func order(_ overrides: [String: String] = [:]) throws -> Order {
    try OrderJSONTests.order(overrides)
  }

  @Test func theAppsUnpaidOrderMadeBeforeThePeriodIsTheOneThatBoughtIt() throws {
    let order = try Self.order()
    #expect(TransactionMatcher.ordered(Self.period(boughtAt: Self.madeAt + 5_000), with: order))
    #expect(TransactionMatcher.ordered(Self.period(boughtAt: Self.madeAt), with: order))
    // The matcher alone refuses it: the token is another order's.
    #expect(throws: SettlementRefusal.accountTokenMismatch) {
      try TransactionMatcher.match(
        order, in: [Self.period(boughtAt: Self.madeAt + 5_000)], usedElsewhere: [])
    }
  }

  @Test func anOrderMadeAfterThePeriodOrPaidOrForAnotherPurchaseDidNotBuyIt() throws {
    let bought = Self.madeAt + 5_000
    // Made after it: an app reporting Transaction.updates on a fresh order.
    #expect(
      !TransactionMatcher.ordered(Self.period(boughtAt: Self.madeAt - 1), with: try Self.order()))
    let paid = try Self.order([
      "trade_status": "TRADE_SUCCESS", "transaction_id": "2000000000000001",
    ])
    #expect(!TransactionMatcher.ordered(Self.period(boughtAt: bought), with: paid))
    let other = try Self.order(["product_id": "com.example.gems"])
    #expect(!TransactionMatcher.ordered(Self.period(boughtAt: bought), with: other))
    #expect(
      !TransactionMatcher.ordered(
        Self.period(boughtAt: bought, quantity: 1), with: try Self.order()))
    var refunded = Self.period(boughtAt: bought)
    refunded.revocationDate = bought + 1
    #expect(!TransactionMatcher.ordered(refunded, with: try Self.order()))
    #expect(
      !TransactionMatcher.ordered(
        Self.period(boughtAt: bought), with: try Self.order(["created_at": "?"])))
  }

  @Test func onlyATokenOrAHeldPurchaseMayBeTheUsersOwn() {
    #expect(SettlementService.mayBeOwnPurchase(.accountTokenMismatch))
    #expect(
      SettlementService.mayBeOwnPurchase(
        .transactionAlreadyUsed(transactionId: nil, productId: "p")))
    #expect(!SettlementService.mayBeOwnPurchase(.quantityMismatch(charged: 2, ordered: 1)))
    #expect(!SettlementService.mayBeOwnPurchase(.productMismatch(paidFor: ["a"], ordered: "b")))
    #expect(!SettlementService.mayBeOwnPurchase(.transactionRevoked(productId: "p")))
    #expect(!SettlementService.mayBeOwnPurchase(.purchaseNotYours))
  }
}
