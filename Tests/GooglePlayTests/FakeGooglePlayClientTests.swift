import Foundation
import GooglePlay
import Testing

/// The client against the real fake over sockets.
@Suite struct FakeGooglePlayClientTests {
  @Test func purchaseGetAcknowledgeGet() async throws {
    try await FakePlay.with { play in
      let token = try await play.purchase([
        "product_id": "gold_100", "obfuscated_account_id": "order-7", "quantity": 3,
      ])
      let before = try await play.client.productPurchase(productId: "gold_100", token: token)
      #expect(before.purchaseStateValue == .purchased)
      #expect(!before.isAcknowledged)
      #expect(before.effectiveQuantity == 3)
      #expect(before.obfuscatedExternalAccountId == "order-7")
      #expect(before.kind == "androidpublisher#productPurchase")
      #expect((before.purchaseTimeMillis ?? 0) > 1_600_000_000_000)
      #expect(!before.isTestPurchase)
      try await play.client.acknowledgeProduct(productId: "gold_100", token: token)
      let after = try await play.client.productPurchase(productId: "gold_100", token: token)
      #expect(after.isAcknowledged)
      #expect(!after.isConsumed)
      // Google refuses a second acknowledgement as a bad request.
      await #expect(throws: GooglePlayFailure.self) {
        try await play.client.acknowledgeProduct(productId: "gold_100", token: token)
      }
    }
  }

  @Test func consumeMarksConsumedAndAcknowledged() async throws {
    try await FakePlay.with { play in
      let token = try await play.purchase(["product_id": "coins", "test": true])
      try await play.client.consumeProduct(productId: "coins", token: token)
      let purchase = try await play.client.productPurchase(productId: "coins", token: token)
      #expect(purchase.isConsumed && purchase.isAcknowledged && purchase.isTestPurchase)
    }
  }

  @Test func pendingCannotBeAcknowledgedUntilCompleted() async throws {
    try await FakePlay.with { play in
      let token = try await play.purchase(["product_id": "gold", "state": "pending"])
      #expect(
        try await play.client.productPurchase(productId: "gold", token: token).purchaseStateValue
          == .pending)
      await #expect {
        try await play.client.acknowledgeProduct(productId: "gold", token: token)
      } throws: { if case .badRequest = $0 as? GooglePlayFailure { true } else { false } }
      try await play.control("fake/v1/products/\(token)/complete")
      #expect(
        try await play.client.productPurchase(productId: "gold", token: token).purchaseStateValue
          == .purchased)
      try await play.client.acknowledgeProduct(productId: "gold", token: token)
    }
  }

  @Test func subscriptionsWithALinkedUpgrade() async throws {
    try await FakePlay.with { play in
      let first = try await play.subscribe([
        "product_id": "vip", "base_plan_id": "monthly", "obfuscated_account_id": "acct",
      ])
      let sub = try await play.client.subscriptionPurchase(token: first)
      #expect(sub.subscriptionStateValue == .active)
      #expect(sub.acknowledgementStateValue == .pending)
      #expect(sub.lineItems?.first?.productId == "vip")
      #expect(sub.lineItems?.first?.offerDetails?.basePlanId == "monthly")
      #expect(sub.lineItems?.first?.autoRenewingPlan?.autoRenewEnabled == true)
      #expect(sub.lineItems?.first?.autoRenewingPlan?.recurringPrice?.units == 4)
      #expect(sub.externalAccountIdentifiers?.obfuscatedExternalAccountId == "acct")
      #expect((sub.latestExpiry ?? .distantPast) > Date())
      try await play.client.acknowledgeSubscription(subscriptionId: "vip", token: first)
      #expect(try await play.client.subscriptionPurchase(token: first).isAcknowledged)

      try await play.control("fake/v1/subscriptions/\(first)/events", ["event": "grace"])
      #expect(
        try await play.client.subscriptionPurchase(token: first).subscriptionStateValue
          == .inGracePeriod)
      try await play.control("fake/v1/subscriptions/\(first)/events", ["event": "renew"])
      #expect(
        try await play.client.subscriptionPurchase(token: first).subscriptionStateValue == .active)

      let upgrade = try await play.subscribe([
        "product_id": "vip_plus", "linked_purchase_token": first,
      ])
      let new = try await play.client.subscriptionPurchase(token: upgrade)
      #expect(new.linkedPurchaseToken == first)
      let old = try await play.client.subscriptionPurchase(token: first)
      #expect(old.subscriptionStateValue == .expired)
      #expect(old.canceledStateContext?.replacementCancellation != nil)
    }
  }

  @Test func voidedPurchasesArePagedByToken() async throws {
    try await FakePlay.with({ $0.voidedPageSize = 2 }) { play in
      var tokens: [String] = []
      for _ in 0..<4 { tokens.append(try await play.purchase(["product_id": "gold"])) }
      tokens.append(try await play.subscribe(["product_id": "vip"]))
      for token in tokens {
        try await play.control("fake/v1/voids", ["purchase_token": token, "reason": 1])
      }
      let first = try await play.client.voidedPurchases()
      #expect(first.purchases.count == 2)
      #expect(first.nextPageToken != nil)
      let all = try await play.client.allVoidedPurchases()
      #expect(all.compactMap(\.purchaseToken) == tokens)
      #expect(all.allSatisfy { $0.reasonValue == .remorse && $0.voidedTimeMillis != nil })
      // Without type=1 Google leaves subscriptions out.
      let productsOnly = try await play.client.allVoidedPurchases(type: .oneTimeProductsOnly)
      #expect(productsOnly.count == 4)
      let refunded = try await play.client.productPurchase(productId: "gold", token: tokens[0])
      #expect(refunded.purchaseStateValue == .canceled)
    }
  }

  @Test func theThreeDayRuleRefundsWhatWasNotAcknowledged() async throws {
    try await FakePlay.with { play in
      let kept = try await play.purchase(["product_id": "gold"])
      let forgotten = try await play.purchase(["product_id": "gold"])
      try await play.client.acknowledgeProduct(productId: "gold", token: kept)
      try await play.control("fake/v1/clock/advance", ["seconds": 2 * 86_400])
      #expect((try await play.control("fake/v1/three-day-rule")["refunded"] as? [String]) == [])
      try await play.control("fake/v1/clock/advance", ["seconds": 86_400 + 1])
      #expect(
        (try await play.control("fake/v1/three-day-rule")["refunded"] as? [String]) == [forgotten])
      let voided = try await play.client.allVoidedPurchases()
      #expect(voided.map(\.purchaseToken) == [forgotten])
      #expect(voided.first?.reasonValue == .unacknowledgedPurchase)
      #expect(
        try await play.client.productPurchase(productId: "gold", token: forgotten)
          .purchaseStateValue == .canceled)
      #expect(
        try await play.client.productPurchase(productId: "gold", token: kept).purchaseStateValue
          == .purchased)
    }
  }

  @Test func injectedFailuresReachTheCallerWithTheirMeaning() async throws {
    try await FakePlay.with { play in
      let token = try await play.purchase(["product_id": "gold"])
      try await play.control("fake/v1/faults", ["status": 429, "count": 1, "retry_after": 12])
      await #expect(throws: GooglePlayFailure.retryable(.status(429), retryAfter: .seconds(12))) {
        _ = try await play.client.productPurchase(productId: "gold", token: token)
      }
      try await play.control("fake/v1/faults", ["status": 503, "count": 1])
      await #expect(throws: GooglePlayFailure.retryable(.status(503), retryAfter: nil)) {
        _ = try await play.client.productPurchase(productId: "gold", token: token)
      }
      try await play.control("fake/v1/faults", ["status": 401, "count": 1])
      await #expect {
        _ = try await play.client.productPurchase(productId: "gold", token: token)
      } throws: {
        if case .credentialsRefused(401, _) = $0 as? GooglePlayFailure { true } else { false }
      }
      // After a 401 the cached token is dropped and a fresh one is used.
      _ = try await play.client.productPurchase(productId: "gold", token: token)
      #expect(await play.tokens.exchangeCount == 2)
      await #expect {
        _ = try await play.client.productPurchase(productId: "gold", token: "fake.unknown")
      } throws: { if case .unknownToken(404, _) = $0 as? GooglePlayFailure { true } else { false } }
      await #expect {
        _ = try await play.client.productPurchase(
          productId: "gold", token: token, packageName: "com.other.app")
      } throws: {
        if case .credentialsRefused(403, _) = $0 as? GooglePlayFailure { true } else { false }
      }
      try await play.control("fake/v1/faults", ["status": 503, "count": 1, "target": "token"])
      await play.tokens.invalidate(try await play.tokens.token())
      await #expect(throws: GooglePlayFailure.retryable(.status(503), retryAfter: nil)) {
        _ = try await play.client.productPurchase(productId: "gold", token: token)
      }
    }
  }

  @Test func ordersGetNamesWhatTheBuyerPaidPerOrder() async throws {
    try await FakePlay.with { play in
      let token = try await play.purchase([
        "product_id": "gold", "quantity": 2, "price_micros": 1_990_000, "currency": "EUR",
      ])
      let orderId = try #require(
        try await play.client.productPurchase(productId: "gold", token: token).orderId)
      let order = try await play.client.order(orderId)
      #expect(order.orderId == orderId && order.purchaseToken == token)
      #expect(order.total?.micros == 3_980_000 && order.total?.currencyCode == "EUR")
      #expect(order.state == "PROCESSED" && order.createDate != nil)
      await #expect {
        _ = try await play.client.order("GPA.0000-0000-0000-00000")
      } throws: { if case .unknownToken(404, _) = $0 as? GooglePlayFailure { true } else { false } }
      try await play.control("fake/v1/faults", ["status": 503, "count": 1, "target": "orders"])
      await #expect(throws: GooglePlayFailure.retryable(.status(503), retryAfter: nil)) {
        _ = try await play.client.order(orderId)
      }
      // The orders fault hit orders.get only.
      #expect(try await play.client.order(orderId).total?.micros == 3_980_000)
    }
  }
}
