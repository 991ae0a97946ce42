import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

@Suite struct FakeVerifyReceiptTests {
  @Test func productionReceiptRoundTripsThroughTheRealReceiptVerifier() async throws {
    try await FakeHarness.with { fake in
      let token = "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B"
      let purchase = try await fake.purchase(["quantity": 3, "app_account_token": token])
      let receipt = try #require(purchase.string("receipt"))
      let result = try await fake.receiptVerifier().verify(receipt: receipt)
      let verified = try #require(result.value, "\(result)")
      #expect(verified.environment == "Production")
      #expect(verified.bundleId == FakeHarness.bundleId)
      #expect(verified.latestReceipt == receipt)
      let transaction = try #require(verified.transactions.first)
      #expect(verified.transactions.count == 1)
      #expect(transaction.transactionId == purchase.string("transaction_id"))
      #expect(transaction.productId == "gold.100")
      #expect(transaction.quantity == 3)
      #expect(transaction.purchaseDate == purchase["purchase_date_ms"] as? Int64)
      #expect(transaction.appAccountToken == token.lowercased())
      #expect(transaction.revocationDate == nil)
    }
  }

  @Test func sandboxReceiptIsAnswered21007ByProductionAndVerifiesThroughTheRedirect() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase(["environment": "Sandbox"])
      let receipt = try #require(purchase.string("receipt"))
      let production = try await fake.verifyReceiptRaw(receipt)
      #expect(production["status"] as? Int == 21007)
      let result = try await fake.receiptVerifier().verify(receipt: receipt)
      let verified = try #require(result.value, "\(result)")
      #expect(verified.environment == "Sandbox")
      #expect(verified.transactions.map(\.transactionId) == [purchase.string("transaction_id")])
      let raw = try await fake.verifyReceiptRaw(receipt, sandbox: true)
      let body = try #require(raw["receipt"] as? [String: Any])
      #expect(body["receipt_type"] as? String == "ProductionSandbox")
    }
  }

  @Test func receiptsAlwaysHavePlusAndSlashSoFormDamageIsRepairedByTheVerifier() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      #expect(receipt.contains("+"))
      #expect(receipt.contains("/"))
      let damaged = receipt.replacingOccurrences(of: "+", with: " ")
      let raw = try await fake.verifyReceiptRaw(damaged)
      #expect(raw["status"] as? Int == 21002)
      let repaired = try await fake.receiptVerifier().verify(receipt: damaged)
      #expect(repaired.value?.latestReceipt == receipt)
    }
  }

  @Test func productionReceiptSentToTheSandboxIs21008() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      let reply = try await fake.verifyReceiptRaw(receipt, sandbox: true)
      #expect(reply.status == 200)
      #expect(reply["status"] as? Int == 21008)
    }
  }

  @Test func purchasesOfOneAppleAccountAccumulateInOneReceipt() async throws {
    try await FakeHarness.with { fake in
      let first = try await fake.purchase(["apple_account": "alice"])
      let second = try await fake.purchase([
        "apple_account": "alice", "product_id": "noads", "type": "Non-Consumable",
      ])
      let stranger = try await fake.purchase(["apple_account": "bob"])
      let receipt = try #require(second.string("receipt"))
      // A device's receipt grows with each purchase, as Apple's PKCS#7 container does.
      let firstReceipt = try #require(first.string("receipt"))
      #expect(
        AppReceiptReader.read(base64: firstReceipt)?.transactionIds == [
          try #require(first.string("transaction_id"))
        ])
      // DER sorts a SET's members: the receipt holds both, in no promised order.
      #expect(
        AppReceiptReader.read(base64: receipt).map { Set($0.transactionIds) }
          == Set(
            [first.string("transaction_id"), second.string("transaction_id")].compactMap { $0 }))
      #expect(stranger.string("receipt") != receipt)
      let result = try await fake.receiptVerifier().verify(receipt: receipt)
      let ids = try #require(result.value).transactions.map(\.transactionId)
      #expect(ids == [first.string("transaction_id"), second.string("transaction_id")])
    }
  }

  @Test func concurrentPurchasesOfOneAccountAllLandInItsReceipt() async throws {
    try await FakeHarness.with { fake in
      let ids = try await withThrowingTaskGroup(of: String?.self) { group in
        for _ in 0..<16 {
          group.addTask {
            try await fake.purchase(["apple_account": "dave"]).string("transaction_id")
          }
        }
        var ids: [String] = []
        for try await id in group { ids += id.map { [$0] } ?? [] }
        return ids
      }
      #expect(Set(ids).count == 16)
      let receipt = try #require(
        try await fake.purchase(["apple_account": "dave"]).string("receipt"))
      let verified = try await fake.receiptVerifier().verify(receipt: receipt)
      let listed = Set(try #require(verified.value).transactions.map(\.transactionId))
      #expect(listed.count == 17)
      #expect(listed.isSuperset(of: ids))
    }
  }

  @Test func purchasesWithoutAnAccountEachGetTheirOwnReceipt() async throws {
    try await FakeHarness.with { fake in
      let first = try await fake.purchase()
      let second = try await fake.purchase()
      #expect(first.string("receipt") != second.string("receipt"))
      #expect(first.string("apple_account") != second.string("apple_account"))
    }
  }

  @Test func everyInAppValueIsAStringAsAppleSendsIt() async throws {
    try await FakeHarness.with { fake in
      let token = "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B"
      let purchase = try await fake.purchase([
        "type": "Auto-Renewable Subscription", "product_id": "vip.month",
        "app_account_token": token,
      ])
      let reply = try await fake.verifyReceiptRaw(try #require(purchase.string("receipt")))
      #expect(reply["status"] as? Int == 0)
      #expect(reply["environment"] as? String == "Production")
      let receipt = try #require(reply["receipt"] as? [String: Any])
      #expect(receipt["bundle_id"] as? String == FakeHarness.bundleId)
      #expect(receipt["application_version"] as? String == "1")
      #expect(receipt["receipt_type"] as? String == "Production")
      let entry = try #require((receipt["in_app"] as? [[String: Any]])?.first)
      for key in [
        "quantity", "product_id", "transaction_id", "original_transaction_id", "purchase_date_ms",
        "original_purchase_date_ms", "expires_date_ms", "web_order_line_item_id",
        "is_trial_period", "in_app_ownership_type", "app_account_token", "purchase_date",
      ] {
        #expect(entry[key] is String, "\(key) should be a string")
      }
      #expect(entry["quantity"] as? String == "1")
      #expect(entry["is_trial_period"] as? String == "false")
      #expect(entry["in_app_ownership_type"] as? String == "PURCHASED")
      #expect(
        entry["purchase_date_ms"] as? String
          == (purchase["purchase_date_ms"] as? Int64).map { String($0) })
      #expect(entry["app_account_token"] as? String == token.lowercased())
      #expect(entry["cancellation_date_ms"] == nil)
      let latest = try #require(reply["latest_receipt_info"] as? [[String: Any]])
      #expect(latest.first?["transaction_id"] as? String == purchase.string("transaction_id"))
      #expect(reply["latest_receipt"] as? String == purchase.string("receipt"))
      let pending = try #require(reply["pending_renewal_info"] as? [[String: Any]])
      #expect(pending.first?["auto_renew_status"] as? String == "1")
    }
  }

  @Test func excludeOldTransactionsKeepsOnlyEachSubscriptionsLatestPeriod() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase(["type": "Auto-Renewable Subscription"])
      let id = try #require(purchase.string("transaction_id"))
      let renewal = try await fake.post(
        "fake/v1/renewals", ["transaction_id": id, "deliver": false])
      let renewedId = try #require(renewal.string("transaction_id"))
      let receipt = try #require(purchase.string("receipt"))
      let all = try await fake.verifyReceiptRaw(receipt)
      let allIds = (all["latest_receipt_info"] as? [[String: Any]])?.compactMap {
        $0["transaction_id"] as? String
      }
      #expect(allIds == [renewedId, id])
      let latest = try await fake.verifyReceiptRaw(
        receipt, extra: ["exclude-old-transactions": true])
      let latestIds = (latest["latest_receipt_info"] as? [[String: Any]])?.compactMap {
        $0["transaction_id"] as? String
      }
      #expect(latestIds == [renewedId])
    }
  }

  @Test(arguments: [
    "!!! not base64 !!!",
    Data("FAKE-RECEIPT:no-such-receipt".utf8).base64EncodedString(),
    Data("MIIT...a real Apple receipt".utf8).base64EncodedString(),
  ])
  func unknownOrMalformedReceiptDataIs21002(receipt: String) async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.verifyReceiptRaw(receipt)
      #expect(reply["status"] as? Int == 21002)
    }
  }

  @Test func aBodyThatIsNotJSONIs21002AndAGetIs21000() async throws {
    try await FakeHarness.with { fake in
      let notJSON = try await fake.send(
        "POST", "verifyReceipt", body: Data("receipt-data=abc".utf8), headers: [:])
      #expect(notJSON["status"] as? Int == 21002)
      let get = try await fake.get("verifyReceipt")
      #expect(get["status"] as? Int == 21000)
    }
  }

  @Test func theReceiptVerifierCallsAnUnknownReceiptInvalid() async throws {
    try await FakeHarness.with { fake in
      let unknown = Data("FAKE-RECEIPT:0123".utf8).base64EncodedString()
      let result = try await fake.receiptVerifier().verify(receipt: unknown)
      #expect(result == .invalid("verify_receipt_21002"))
    }
  }

  @Test func aWrongSharedSecretIs21004AndTheRightOneVerifies() async throws {
    try await FakeHarness.with({ $0.sharedSecret = "s3cret" }) { fake in
      let purchase = try await fake.purchase(["type": "Auto-Renewable Subscription"])
      let receipt = try #require(purchase.string("receipt"))
      let wrong = try await fake.receiptVerifier(sharedSecret: "other").verify(receipt: receipt)
      let mismatch = VerificationResult<VerifiedReceipt>.misconfigured(
        Misconfiguration(setting: .sharedSecret, status: 21004, environment: "Production"))
      #expect(wrong == mismatch)
      let missing = try await fake.receiptVerifier().verify(receipt: receipt)
      #expect(missing == mismatch)
      let right = try await fake.receiptVerifier(sharedSecret: "s3cret").verify(receipt: receipt)
      #expect(right.value?.transactions.count == 1)
    }
  }

  @Test func aRefundShowsCancellationInLaterReceiptsAndAReversalClearsIt() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase()
      let id = try #require(purchase.string("transaction_id"))
      let receipt = try #require(purchase.string("receipt"))
      let refund = try await fake.post(
        "fake/v1/refunds", ["transaction_id": id, "revocation_reason": 1, "deliver": false])
      #expect(refund.status == 200)

      let raw = try await fake.verifyReceiptRaw(receipt)
      let entry = try #require(
        ((raw["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])?.first)
      let cancelled = try #require(entry["cancellation_date_ms"] as? String)
      #expect(Int64(cancelled) != nil)
      #expect(entry["cancellation_reason"] as? String == "1")
      let verified = try await fake.receiptVerifier().verify(receipt: receipt)
      let transaction = try #require(verified.value?.transactions.first)
      #expect(transaction.revocationDate == Int64(cancelled))
      #expect(transaction.revocationReason == 1)

      _ = try await fake.post(
        "fake/v1/refunds",
        ["transaction_id": id, "notification_type": "REFUND_REVERSED", "deliver": false])
      let reinstated = try await fake.receiptVerifier().verify(receipt: receipt)
      #expect(reinstated.value?.transactions.first?.revocationDate == nil)
    }
  }
}
