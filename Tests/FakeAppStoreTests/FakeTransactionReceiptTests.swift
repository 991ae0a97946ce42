import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

/// The fake's iOS 6-style transaction receipts (`receipt_style: transaction`), answered in
/// Apple's shape and read by the real `ReceiptVerifier`.
@Suite struct FakeTransactionReceiptTests {
  @Test func aTransactionReceiptIsAnsweredWithTheTransactionAsTheReceipt() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase(["receipt_style": "transaction", "quantity": 2])
      let receipt = try #require(purchase.string("receipt"))
      #expect(receipt == purchase.string("transaction_receipt"))
      #expect(receipt != purchase.string("app_receipt"))
      #expect(receipt.contains("+") && receipt.contains("/"))

      let raw = try await fake.verifyReceiptRaw(receipt)
      #expect(raw["status"] as? Int == 0)
      #expect(raw["environment"] == nil)
      let body = try #require(raw["receipt"] as? [String: Any])
      #expect(body["bid"] as? String == FakeHarness.bundleId)
      #expect(body["bundle_id"] == nil && body["in_app"] == nil)
      #expect(body["transaction_id"] as? String == purchase.string("transaction_id"))
      #expect(body["quantity"] as? String == "2")
      for field in ["bvrs", "item_id", "unique_identifier", "purchase_date_ms"] {
        #expect(body[field] is String, "\(field)")
      }

      let verified = try #require(try await fake.receiptVerifier().verify(receipt: receipt).value)
      #expect(verified.format == .transaction)
      #expect(verified.transactions.map(\.transactionId) == [purchase.string("transaction_id")])
      #expect(verified.transactions.first?.quantity == 2)
    }
  }

  @Test func aSubscriptionsLatestReceiptInfoIsASingleObject() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase([
        "receipt_style": "transaction", "type": "Auto-Renewable Subscription",
        "product_id": "vip.monthly",
      ])
      let receipt = try #require(purchase.string("receipt"))
      let raw = try await fake.verifyReceiptRaw(receipt)
      let latest = try #require(raw["latest_receipt_info"] as? [String: Any])
      #expect(latest["transaction_id"] as? String == purchase.string("transaction_id"))
      let expires = try #require(latest["expires_date"] as? String)
      #expect(Int64(expires) == purchase["expires_date_ms"] as? Int64)
      let verified = try #require(try await fake.receiptVerifier().verify(receipt: receipt).value)
      #expect(verified.transactions.first?.expiresDate == purchase["expires_date_ms"] as? Int64)
    }
  }

  @Test func anExpiredSubscriptionIs21006AndStillVerifies() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase([
        "receipt_style": "transaction", "type": "Auto-Renewable Subscription",
        "product_id": "vip.monthly", "expires_in_seconds": -60,
      ])
      let receipt = try #require(purchase.string("receipt"))
      let raw = try await fake.verifyReceiptRaw(receipt)
      #expect(raw["status"] as? Int == 21006)
      #expect(raw["latest_expired_receipt_info"] is [String: Any])
      let verified = try #require(try await fake.receiptVerifier().verify(receipt: receipt).value)
      #expect(verified.transactions.count == 1)
    }
  }

  @Test func anotherAppsTransactionReceiptIsRefused() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase([
        "receipt_style": "transaction", "bundle_id": "com.example.other",
      ])
      let receipt = try #require(purchase.string("receipt"))
      #expect(
        try await fake.receiptVerifier().verify(receipt: receipt) == .invalid("bundle_id_mismatch"))
    }
  }

  @Test func aWrongSharedSecretIs21004ForTransactionReceiptsToo() async throws {
    try await FakeHarness.with({ $0.sharedSecret = "s3cret" }) { fake in
      let purchase = try await fake.purchase(["receipt_style": "transaction"])
      let receipt = try #require(purchase.string("receipt"))
      let wrong = try await fake.receiptVerifier(sharedSecret: "other").verify(receipt: receipt)
      #expect(wrong.reason == "verify_receipt_21004")
      let right = try await fake.receiptVerifier(sharedSecret: "s3cret").verify(receipt: receipt)
      #expect(right.value?.transactions.count == 1)
    }
  }

  @Test func anUnknownReceiptStyleIsRefused() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.post(
        "fake/v1/purchases",
        [
          "bundle_id": FakeHarness.bundleId, "product_id": "gold.100", "type": "Consumable",
          "environment": "Production", "receipt_style": "ios5",
        ])
      #expect(reply.status == 422)
    }
  }
}
