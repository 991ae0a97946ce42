import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

/// Get All Subscription Statuses, asked by `SubscriptionStatusClient` and answered by the fake
/// from its own state: Apple's shape, signed data that verifies, a state changed without any
/// notification, and Apple's refusals.
@Suite struct SubscriptionStatusTests {
  static func client(_ fake: FakeHarness, keyId: String? = nil) throws -> SubscriptionStatusClient {
    let key = try #require(
      AppStoreAPIKey(
        pem: fake.server.apiPrivateKeyPEM, keyId: keyId ?? fake.server.configuration.apiKeyId,
        issuerId: fake.server.configuration.apiIssuerId))
    return SubscriptionStatusClient(
      baseURL: fake.base, key: key, bundleId: FakeHarness.bundleId,
      timeout: FakeHarness.patientTimeout)
  }

  static func subscribe(_ fake: FakeHarness, account: String, product: String) async throws
    -> String
  {
    let reply = try await fake.purchase([
      "product_id": product, "type": "Auto-Renewable Subscription", "apple_account": account,
    ])
    return try #require(reply.string("transaction_id"))
  }

  @Test func listsTheOwnersSubscriptionsWithSignedDataThatVerifies() async throws {
    try await FakeHarness.with { fake in
      let account = "statuses-\(UUID().uuidString)"
      let monthly = try await Self.subscribe(fake, account: account, product: "vip.monthly")
      let other = try await Self.subscribe(fake, account: account, product: "club.monthly")
      let answer = try await Self.client(fake).statuses(originalTransactionId: monthly).get()
      #expect(answer.bundleId == FakeHarness.bundleId)
      #expect(answer.environment == "Production")
      #expect(answer.appAppleId == fake.server.configuration.appAppleId)
      let entry = try #require(answer.last(originalTransactionId: monthly))
      #expect(answer.last(originalTransactionId: other) != nil)
      #expect(entry.statusValue == .active)
      let verifier = try fake.signedDataVerifier()
      guard case .valid(let transaction) = verifier.verifyTransaction(entry.signedTransactionInfo),
        case .valid(let renewal) = verifier.verifyRenewalInfo(entry.signedRenewalInfo)
      else {
        Issue.record("the signed data does not verify")
        return
      }
      #expect(transaction.transactionId == monthly)
      #expect(renewal.originalTransactionId == monthly)
    }
  }

  @Test func aStateChangedWithoutANotificationShowsInTheStatus() async throws {
    try await FakeHarness.with { fake in
      let id = try await Self.subscribe(fake, account: "state-\(UUID())", product: "vip.monthly")
      let changed = try await fake.post(
        "fake/v1/subscriptions/state",
        [
          "transaction_id": id, "expires_in_seconds": -60, "billing_retry": true,
          "grace_period_expires_in_seconds": 3600,
        ])
      #expect(changed.status == 200)
      #expect(changed.json["status"] as? Int == 4)
      let entry = try #require(
        try await Self.client(fake).statuses(originalTransactionId: id).get()
          .last(originalTransactionId: id))
      #expect(entry.statusValue == .billingGracePeriod)
      let renewal = try decodedPayload(entry.signedRenewalInfo)
      #expect(renewal["isInBillingRetryPeriod"] as? Bool == true)
      #expect(renewal["gracePeriodExpiresDate"] != nil)

      let unknown = try await fake.post(
        "fake/v1/subscriptions/state", ["transaction_id": "999", "expires_in_seconds": 1])
      #expect(unknown.status == 404)
    }
  }

  @Test func refusalsAreApples() async throws {
    try await FakeHarness.with { fake in
      let consumable = try #require(try await fake.purchase().string("transaction_id"))
      let client = try Self.client(fake)
      guard
        case .failure(.notFound(let why)) = await client.statuses(
          originalTransactionId: consumable)
      else {
        Issue.record("a consumable has no subscription status")
        return
      }
      #expect(why.contains("4040010"))
      let id = try await Self.subscribe(fake, account: "refused-\(UUID())", product: "vip.monthly")
      let wrongKey = try Self.client(fake, keyId: "SOMEONEELSE")
      guard case .failure(.unauthorized) = await wrongKey.statuses(originalTransactionId: id) else {
        Issue.record("a token of another key id must be refused")
        return
      }
      let raw = try await fake.send(
        "GET", "inApps/v1/subscriptions/\(id)", body: nil, headers: [:])
      #expect(raw.status == 401)
    }
  }

  @Test func anUnreachableAppleIsWorthRetrying() async throws {
    try await FakeHarness.with { fake in
      let key = try #require(
        AppStoreAPIKey(
          pem: fake.server.apiPrivateKeyPEM, keyId: "K", issuerId: "I"))
      let client = SubscriptionStatusClient(
        baseURL: URL(string: "http://127.0.0.1:9")!, key: key, bundleId: FakeHarness.bundleId,
        timeout: .seconds(2))
      guard case .failure(.unreachable) = await client.statuses(originalTransactionId: "1") else {
        Issue.record("expected unreachable")
        return
      }
    }
  }
}
