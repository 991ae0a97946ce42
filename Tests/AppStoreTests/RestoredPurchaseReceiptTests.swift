import AppStore
import Foundation
import StorekeeperLogging
import Testing

/// A StoreKit 1 restore of a one-time purchase is read from verifyReceipt as the purchase.
@Suite struct RestoredPurchaseReceiptTests {
  static func transactions(_ inApp: [[String: String]]) async throws -> [VerifiedTransaction] {
    let object: [String: Any] = [
      "status": 0, "environment": "Production",
      "receipt": ["bundle_id": Fixtures.bundleId, "in_app": inApp],
    ]
    let body = [UInt8](try JSONSerialization.data(withJSONObject: object))
    let transport = ScriptedTransport { _ in (200, body) }
    let configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    let verifier = ReceiptVerifier(
      configuration: configuration, transport: transport,
      logger: Logger(label: "test", level: .critical))
    return try #require(await verifier.verify(receipt: "MIIT").value).transactions
  }

  static let purchase: [String: String] = [
    "product_id": "pro", "transaction_id": "1000000001", "original_transaction_id": "1000000001",
    "purchase_date_ms": "1698000000000", "original_purchase_date_ms": "1698000000000",
  ]
  static let restore: [String: String] = [
    "product_id": "pro", "transaction_id": "1000000007", "original_transaction_id": "1000000001",
    "purchase_date_ms": "1699000000000", "original_purchase_date_ms": "1698000000000",
  ]

  @Test func aRestoreIsItsPurchaseOnceWithTheOriginalDate() async throws {
    for inApp in [[Self.restore], [Self.purchase, Self.restore], [Self.restore, Self.purchase]] {
      let read = try await Self.transactions(inApp)
      #expect(read.map(\.transactionId) == ["1000000001"])
      #expect(read.map(\.originalTransactionId) == ["1000000001"])
      #expect(read.map(\.purchaseDate) == [1_698_000_000_000])
    }
  }

  @Test func aCancellationOnAnyOfItsEntriesRefundsThePurchase() async throws {
    var refunded = Self.restore
    refunded["cancellation_date_ms"] = "1699500000000"
    refunded["cancellation_reason"] = "0"
    for inApp in [[refunded, Self.purchase], [Self.purchase, refunded]] {
      let read = try await Self.transactions(inApp)
      #expect(read.map(\.revocationDate) == [1_699_500_000_000])
    }
  }

  @Test func aSubscriptionRenewalStaysAPurchaseOfItsOwn() async throws {
    let renewal: [String: String] = [
      "product_id": "vip", "transaction_id": "1000000003", "original_transaction_id": "1000000002",
      "purchase_date_ms": "1699000000000", "expires_date_ms": "1701000000000",
      "web_order_line_item_id": "1000000000000010",
    ]
    let read = try await Self.transactions([renewal])
    #expect(read.map(\.transactionId) == ["1000000003"])
    #expect(read.map(\.purchaseDate) == [1_699_000_000_000])
  }
}
