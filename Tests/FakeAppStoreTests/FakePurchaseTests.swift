import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

@Suite struct FakePurchaseTests {
  static let token = "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B"

  @Test func signedTransactionVerifiesWithTheFakeRootAndCarriesApplesFields() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.purchase([
        "quantity": 2, "app_account_token": Self.token, "price": 990,
      ])
      let signed = try #require(reply.string("signed_transaction"))
      let result = try fake.signedDataVerifier().verifyTransaction(signed)
      let transaction = try #require(result.value, "\(result)")
      #expect(transaction.transactionId == reply.string("transaction_id"))
      #expect(transaction.originalTransactionId == transaction.transactionId)
      #expect(transaction.bundleId == FakeHarness.bundleId)
      #expect(transaction.productId == "gold.100")
      #expect(transaction.quantity == 2)
      #expect(transaction.typeValue == .consumable)
      #expect(transaction.appAccountToken == Self.token.lowercased())
      #expect(transaction.inAppOwnershipTypeValue == .purchased)
      #expect(transaction.environmentValue == .production)
      #expect(transaction.transactionReasonValue == .purchase)
      #expect(transaction.storefront == "USA")
      #expect(transaction.storefrontId == "143441")
      #expect(transaction.price == 990)
      #expect(transaction.currency == "USD")
      #expect(transaction.purchaseDate == reply["purchase_date_ms"] as? Int64)
      #expect(transaction.originalPurchaseDate == transaction.purchaseDate)
      #expect(transaction.signedDate != nil)
      #expect(transaction.expiresDate == nil)
      #expect(transaction.webOrderLineItemId == nil)
      #expect(transaction.subscriptionGroupIdentifier == nil)
    }
  }

  @Test func autoRenewablePurchaseExpiresThirtyDaysAfterItsPurchaseDate() async throws {
    try await FakeHarness.with { fake in
      let purchased: Int64 = 1_700_000_000_000
      let reply = try await fake.purchase([
        "type": "Auto-Renewable Subscription", "product_id": "vip.month",
        "purchase_date_ms": purchased,
      ])
      let result = try fake.signedDataVerifier().verifyTransaction(
        try #require(reply.string("signed_transaction")))
      let transaction = try #require(result.value)
      #expect(transaction.typeValue == .autoRenewableSubscription)
      #expect(transaction.purchaseDate == purchased)
      #expect(transaction.expiresDate == purchased + 30 * 86_400_000)
      #expect(reply["expires_date_ms"] as? Int64 == transaction.expiresDate)
      #expect(transaction.webOrderLineItemId.flatMap { UInt64($0) } != nil)
      #expect(transaction.subscriptionGroupIdentifier != nil)
    }
  }

  @Test func expiresInSecondsCountsFromNowAndMayBeInThePast() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.purchase([
        "type": "Auto-Renewable Subscription", "expires_in_seconds": -60,
      ])
      let expires = try #require(reply["expires_date_ms"] as? Int64)
      let purchased = try #require(reply["purchase_date_ms"] as? Int64)
      #expect(expires == purchased - 60_000)
    }
  }

  @Test func aVerifierThatDoesNotTrustTheFakeRootRefusesItsTransactions() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.purchase()
      var configuration = AppStoreConfiguration(bundleId: FakeHarness.bundleId)
      configuration.allowedEnvironments = ["Production"]
      let verifier = try SignedDataVerifier(configuration: configuration)
      let result = verifier.verifyTransaction(try #require(reply.string("signed_transaction")))
      #expect(result == .invalid("untrusted_root"))
    }
  }

  @Test func transactionIdsAreAppleShapedAndDifferBetweenFakeProcesses() async throws {
    let first = try await FakeHarness.with { try await $0.purchase().string("transaction_id") }
    let second = try await FakeHarness.with { fake in
      (
        try await fake.purchase().string("transaction_id"),
        try await fake.purchase().string("transaction_id")
      )
    }
    let ids = [first, second.0, second.1].compactMap { $0 }
    #expect(ids.count == 3)
    #expect(Set(ids).count == 3)
    for id in ids {
      #expect(id.count == 16)
      #expect(id.hasPrefix("2"))
      #expect(UInt64(id) != nil)
    }
  }

  @Test func xcodePurchasesAreSignedButRefusedByTheVerifierAndByVerifyReceipt() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.purchase(["environment": "Xcode"])
      let result = try fake.signedDataVerifier().verifyTransaction(
        try #require(reply.string("signed_transaction")))
      #expect(result == .invalid("environment_not_allowed"))
      let receipt = try await fake.verifyReceiptRaw(try #require(reply.string("receipt")))
      #expect(receipt["status"] as? Int == 21003)
    }
  }

  @Test(
    arguments: [
      (["type": "Subscription"], "type"),
      (["environment": "Staging"], "environment"),
      (["type": "Non-Consumable", "quantity": 2], "quantity"),
      (["quantity": 11], "quantity"),
      (["app_account_token": "not-a-uuid"], "app_account_token"),
      (["product_id": ""], "product_id"),
    ] as [([String: any Sendable], String)])
  func refusesAnInvalidPurchaseNamingTheField(fields: [String: any Sendable], field: String)
    async throws
  {
    try await FakeHarness.with { fake in
      var body: [String: Any] = [
        "bundle_id": FakeHarness.bundleId, "product_id": "gold.100", "type": "Consumable",
        "environment": "Production",
      ]
      body.merge(fields) { _, new in new }
      let reply = try await fake.post("fake/v1/purchases", body)
      #expect(reply.status == 422)
      #expect(reply.string("code") == "invalid_field")
      let errors = reply["errors"] as? [[String: Any]]
      #expect(errors?.first?["field"] as? String == field)
    }
  }

  @Test func refusesABodyThatIsNotJSON() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.send(
        "POST", "fake/v1/purchases", body: Data("bundle_id=x".utf8), headers: [:])
      #expect(reply.status == 400)
      #expect(reply.string("code") == "malformed_json")
      #expect(reply.headers["content-type"] == "application/problem+json")
    }
  }

  @Test func transactionLookupSignsTheCurrentStateAndUnknownIdsAre404() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase()
      let id = try #require(purchase.string("transaction_id"))
      let found = try await fake.get("fake/v1/transactions/\(id)")
      #expect(found.status == 200)
      #expect(found.string("receipt") == purchase.string("receipt"))
      let verified = try fake.signedDataVerifier().verifyTransaction(
        try #require(found.string("signed_transaction")))
      #expect(verified.value?.transactionId == id)
      let missing = try await fake.get("fake/v1/transactions/1")
      #expect(missing.status == 404)
      #expect(missing.string("code") == "transaction_not_found")
    }
  }
}
