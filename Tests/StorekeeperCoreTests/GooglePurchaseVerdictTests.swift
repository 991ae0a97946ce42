import Foundation
import GooglePlay
import Testing

@testable import StorekeeperCore

/// What Storekeeper makes of Google's answers (pure: the answers are Google's documented JSON,
/// decoded by the GooglePlay module's own types).
@Suite struct GooglePurchaseVerdictTests {
  static func product(
    _ id: String = "gold", type: ProductType = .consumable, googleId: String? = nil,
    basePlan: String? = nil
  ) -> Product {
    Product(
      draft: ProductDraft(
        productId: id, type: type, title: id, description: "", price: "1.00", currency: "USD",
        sortOrder: 0, active: true, grants: .empty, content: .object([:]),
        googleProductId: googleId,
        googleBasePlanId: basePlan),
      revision: 1, createdAt: "", updatedAt: "")
  }

  static func productPurchase(_ json: String) throws -> ProductPurchase {
    try JSONDecoder().decode(ProductPurchase.self, from: Data(json.utf8))
  }

  static func subscription(_ json: String) throws -> SubscriptionPurchaseV2 {
    try JSONDecoder().decode(SubscriptionPurchaseV2.self, from: Data(json.utf8))
  }

  @Test func onlyAPurchasedStateCredits() throws {
    let product = Self.product()
    let pending = try Self.productPurchase(#"{"purchaseState": 2}"#)
    #expect(
      GooglePurchaseVerifier.verdict(pending, token: "t", product: product, packageName: "p")
        == .pending)
    let canceled = try Self.productPurchase(#"{"purchaseState": 1}"#)
    #expect(
      GooglePurchaseVerifier.verdict(canceled, token: "t", product: product, packageName: "p")
        == .canceled)
    let paid = try Self.productPurchase(
      #"{"purchaseState": 0, "orderId": "GPA.1", "quantity": 3, "purchaseType": 0, "purchaseTimeMillis": "1700000000000", "obfuscatedExternalAccountId": "abc", "acknowledgementState": 0, "consumptionState": 0}"#
    )
    guard
      case .purchased(let purchase) = GooglePurchaseVerifier.verdict(
        paid, token: "t", product: product, packageName: "p")
    else {
      Issue.record("a purchased state must credit")
      return
    }
    #expect(purchase.orderId == "GPA.1" && purchase.quantity == 3)
    #expect(purchase.isTest && purchase.environment == "Sandbox")
    #expect(purchase.purchaseTimeMs == 1_700_000_000_000)
    #expect(purchase.obfuscatedAccountId == "abc")
  }

  @Test func anUnknownStateIsAskedAgainNotCredited() throws {
    let odd = try Self.productPurchase(#"{"purchaseState": 7}"#)
    guard
      case .retryable = GooglePurchaseVerifier.verdict(
        odd, token: "t", product: Self.product(), packageName: "p")
    else {
      Issue.record("an unknown purchaseState is no payment")
      return
    }
  }

  @Test func aPurchaseWithoutAnOrderIdGoesByItsToken() throws {
    let paid = try Self.productPurchase(#"{"purchaseState": 0}"#)
    guard
      case .purchased(let purchase) = GooglePurchaseVerifier.verdict(
        paid, token: "the-token", product: Self.product(), packageName: "p")
    else {
      Issue.record("purchased")
      return
    }
    #expect(purchase.orderId == "the-token" && purchase.quantity == 1 && !purchase.isTest)
  }

  @Test func aSubscriptionKeepsGooglesRecurringPriceAndAProductHasNone() throws {
    let product = Self.product("vip", type: .autoRenewable)
    func price(_ money: String) throws -> (Int64?, String?) {
      let answer = try Self.subscription(
        #"{"subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "startTime": "2026-01-01T00:00:00Z", "lineItems": [{"productId": "vip", "expiryTime": "2026-02-01T00:00:00Z", "autoRenewingPlan": {"recurringPrice": "#
          + money + "}}]}")
      guard
        case .purchased(let purchase) = GooglePurchaseVerifier.verdict(
          answer, token: "t", product: product, packageName: "p")
      else {
        Issue.record("an active subscription credits")
        return (nil, nil)
      }
      return (purchase.priceMicros, purchase.currency)
    }
    #expect(
      try price(#"{"currencyCode": "EUR", "units": "4", "nanos": 990000000}"#) == (4_990_000, "EUR")
    )
    #expect(try price(#"{"currencyCode": "JPY", "units": "600"}"#) == (600_000_000, "JPY"))
    // An amount without a currency, or one too large for micros, is no price.
    #expect(try price(#"{"units": "4"}"#) == (nil, nil))
    #expect(try price(#"{"currencyCode": "USD", "units": "9223372036854775807"}"#) == (nil, nil))
    let paid = try Self.productPurchase(#"{"purchaseState": 0, "orderId": "GPA.2"}"#)
    guard
      case .purchased(let one) = GooglePurchaseVerifier.verdict(
        paid, token: "t", product: Self.product(), packageName: "p")
    else {
      Issue.record("purchased")
      return
    }
    #expect(one.priceMicros == nil && one.currency == nil)
  }

  @Test func aSubscriptionMustHaveALineItemForTheProductAndItsBasePlan() throws {
    let answer = try Self.subscription(
      #"{"subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "lineItems": [{"productId": "vip", "expiryTime": "2030-01-01T00:00:00Z", "latestSuccessfulOrderId": "GPA.9", "offerDetails": {"basePlanId": "monthly"}}], "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING", "linkedPurchaseToken": "old"}"#
    )
    let vip = Self.product("vip", type: .autoRenewable)
    guard
      case .purchased(let purchase) = GooglePurchaseVerifier.verdict(
        answer, token: "t", product: vip, packageName: "p")
    else {
      Issue.record("an active subscription pays")
      return
    }
    #expect(purchase.kind == .subscription && purchase.orderId == "GPA.9")
    #expect(purchase.linkedPurchaseToken == "old" && !purchase.acknowledged)
    #expect(purchase.expiryTimeMs == 1_893_456_000_000)
    let yearly = Self.product("vip", type: .autoRenewable, basePlan: "yearly")
    #expect(
      GooglePurchaseVerifier.verdict(answer, token: "t", product: yearly, packageName: "p")
        == .otherProduct(["vip/monthly"]))
    let other = Self.product("gold_sub", type: .autoRenewable)
    #expect(
      GooglePurchaseVerifier.verdict(answer, token: "t", product: other, packageName: "p")
        == .otherProduct(["vip/monthly"]))
  }

  @Test func aPendingSubscriptionWaitsAndItsCancellationIsRefused() throws {
    let vip = Self.product("vip", type: .autoRenewable)
    let pending = try Self.subscription(#"{"subscriptionState": "SUBSCRIPTION_STATE_PENDING"}"#)
    #expect(
      GooglePurchaseVerifier.verdict(pending, token: "t", product: vip, packageName: "p")
        == .pending)
    let canceled = try Self.subscription(
      #"{"subscriptionState": "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"}"#)
    #expect(
      GooglePurchaseVerifier.verdict(canceled, token: "t", product: vip, packageName: "p")
        == .canceled)
  }

  @Test func googlesFailuresMeanWhatIssue25Says() {
    #expect(
      GooglePurchaseVerifier.verdict(.retryable(.status(429), retryAfter: nil))
        == .retryable("google_quota (429)"))
    #expect(
      GooglePurchaseVerifier.verdict(.retryable(.status(503), retryAfter: nil))
        == .retryable("google_status 503"))
    guard
      case .misconfigured = GooglePurchaseVerifier.verdict(.credentialsRefused(status: 403, "no"))
    else {
      Issue.record("403 is the operator's")
      return
    }
    guard case .unknownToken = GooglePurchaseVerifier.verdict(.unknownToken(status: 410, "gone"))
    else {
      Issue.record("410 is an unknown token")
      return
    }
    guard case .refused = GooglePurchaseVerifier.verdict(.badRequest("bad")) else {
      Issue.record("400 never succeeds")
      return
    }
  }

  @Test func ownershipIsTheAppStoresRulesButTheQuantityIsGoogles() throws {
    let purchase = GooglePurchase(
      token: "t", packageName: "p", kind: .product, googleProductId: "gold", basePlanId: nil,
      orderId: "GPA.1", quantity: 2, obfuscatedAccountId: "6f1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5b",
      isTest: false, purchaseTimeMs: 0, expiryTimeMs: nil, linkedPurchaseToken: nil,
      state: "purchased", acknowledged: false, consumed: false)
    var order = Order(
      tradeNo: "T", userId: "u", productId: "gold", quantity: 2, price: "1", currency: "USD",
      amount: "2", appAccountToken: "6f1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5b",
      tradeStatus: .waitBuyerPay,
      closeReason: nil, origin: .order, transactionId: nil, environment: nil, verification: nil,
      createdAt: "", expiresAt: "", paidAt: nil, closedAt: nil, store: .googlePlay)
    let gold = Self.product("gold")
    #expect(throws: Never.self) { try GoogleSettlement.check(purchase, of: gold, pays: order) }
    // A purchase of another product never pays the order, whoever's account id it carries.
    #expect(throws: SettlementRefusal.productMismatch(paidFor: ["gems"], ordered: "gold")) {
      try GoogleSettlement.check(purchase, of: Self.product("gems"), pays: order)
    }
    var upper = purchase
    upper.obfuscatedAccountId = "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B"
    #expect(throws: Never.self) { try GoogleSettlement.check(upper, of: gold, pays: order) }
    var unbound = purchase
    unbound.obfuscatedAccountId = nil
    #expect(throws: Never.self) { try GoogleSettlement.check(unbound, of: gold, pays: order) }
    var another = purchase
    another.obfuscatedAccountId = "00000000-0000-4000-8000-000000000000"
    #expect(throws: SettlementRefusal.accountTokenMismatch) {
      try GoogleSettlement.check(another, of: gold, pays: order)
    }
    // The user picks the quantity in Google's purchase screen: it resizes the order, within
    // what an order holds (1 to 10 units, more than one only of a consumable).
    var one = purchase
    one.quantity = 1
    #expect(throws: Never.self) { try GoogleSettlement.check(one, of: gold, pays: order) }
    #expect(try GoogleSettlement.resizedQuantity(order, to: one, product: gold) == 1)
    #expect(try GoogleSettlement.resizedQuantity(order, to: purchase, product: gold) == nil)
    var eleven = purchase
    eleven.quantity = 11
    #expect(throws: SettlementRefusal.quantityMismatch(charged: 11, ordered: 2)) {
      try GoogleSettlement.check(eleven, of: gold, pays: order)
    }
    #expect(throws: SettlementRefusal.quantityMismatch(charged: 2, ordered: 1)) {
      var single = order
      single.quantity = 1
      try GoogleSettlement.check(
        purchase, of: Self.product("gold", type: .nonConsumable), pays: single)
    }
    order.store = .appStore
    #expect(throws: SettlementRefusal.storeMismatch(ordered: "app_store")) {
      try GoogleSettlement.check(purchase, of: gold, pays: order)
    }
  }

  @Test func whatEachPurchaseStillNeedsAtGoogle() {
    var purchase = GooglePurchase(
      token: "t", packageName: "p", kind: .product, googleProductId: "gold", basePlanId: nil,
      orderId: "GPA.1", quantity: 1, obfuscatedAccountId: nil, isTest: false, purchaseTimeMs: 0,
      expiryTimeMs: nil, linkedPurchaseToken: nil, state: "purchased", acknowledged: false,
      consumed: false)
    #expect(GoogleAcknowledgementAction.needed(for: purchase, product: Self.product()) == .consume)
    #expect(
      GoogleAcknowledgementAction.needed(
        for: purchase, product: Self.product(type: .nonConsumable)) == .acknowledge)
    // A pass is bought again and again: Google sells it again only once it is consumed.
    #expect(
      GoogleAcknowledgementAction.needed(for: purchase, product: Self.product(type: .nonRenewing))
        == .consume)
    purchase.acknowledged = true
    #expect(
      GoogleAcknowledgementAction.needed(for: purchase, product: Self.product(type: .nonConsumable))
        == nil)
    // Acknowledged but not consumed: it still cannot be bought again.
    #expect(GoogleAcknowledgementAction.needed(for: purchase, product: Self.product()) == .consume)
    purchase.kind = .subscription
    purchase.acknowledged = false
    #expect(
      GoogleAcknowledgementAction.needed(for: purchase, product: Self.product(type: .autoRenewable))
        == .acknowledgeSubscription)
  }

  @Test func theAccessPolicyForGraceHoldAndPause() {
    let granting: [SubscriptionState] = [.active, .inGracePeriod, .canceled]
    for state in SubscriptionState.allCases {
      #expect(
        GoogleNotificationService.grantsAccess(state) == granting.contains(state), "\(state)")
    }
    #expect(!GoogleNotificationService.grantsAccess(nil))
  }

  /// Only the subscriber's own cancellation (or its undoing) is `subscription.auto_renew_changed`:
  /// one Google, the developer or an upgrade made is no choice of theirs to win back.
  @Test func onlyTheSubscribersOwnCancellationIsTold() {
    func told(_ state: SubscriptionState, from previous: SubscriptionState?, user: Bool = true)
      -> [String]
    {
      GoogleNotificationService.stateEvents(state, previous: previous, userCanceled: user, [:])
        .map { "\($0.type.rawValue) \($0.data["auto_renew"].map { "\($0)" } ?? "")" }
    }
    #expect(told(.canceled, from: .active) == ["subscription.auto_renew_changed bool(false)"])
    #expect(told(.canceled, from: .active, user: false) == [])
    #expect(told(.active, from: .canceled) == ["subscription.auto_renew_changed bool(true)"])
    #expect(told(.expired, from: .canceled) == ["subscription.expired "])
    #expect(told(.active, from: .onHold) == [])
  }
}
