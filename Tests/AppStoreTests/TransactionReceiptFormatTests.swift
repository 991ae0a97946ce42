import AppStore
import Foundation
import StorekeeperLogging
import Testing

/// Apple's answers to the iOS 6-style transaction receipt that seeds 000–002 post, written
/// from Apple's documented fields: `receipt` is the transaction itself (`bid`, `bvrs`,
/// `item_id`, `unique_identifier`, …), with no `bundle_id` and no `in_app`; a subscription's
/// `latest_receipt_info` is one object and its `expires_date` is milliseconds.
@Suite struct TransactionReceiptFormatTests {
  static let url = URL(string: "https://apple.test/production")!

  func verify(_ answer: [String: Any], bundleId: String = Fixtures.bundleId) async
    -> VerificationResult<VerifiedReceipt>
  {
    let body = [UInt8]((try? JSONSerialization.data(withJSONObject: answer)) ?? Data())
    var configuration = AppStoreConfiguration(bundleId: bundleId)
    configuration.allowedEnvironments = ["Production", "Sandbox"]
    configuration.verifyReceiptURL = Self.url
    configuration.verifyReceiptSandboxURL = Self.url
    return await ReceiptVerifier(
      configuration: configuration, transport: ScriptedTransport { _ in (200, body) },
      logger: Logger(label: "test", level: .critical)
    ).verify(receipt: "MIITdGE=")
  }

  static func transaction(bid: String = Fixtures.bundleId) -> [String: Any] {
    [
      "bid": bid, "bvrs": "1.0", "item_id": "662554154", "app_item_id": "659563252",
      "unique_identifier": "7468f08dc6b0cb8fa02580c5f35ef943ff3ca6da",
      "unique_vendor_identifier": "3873A4E2-FB10-4BA4-A24E-11C50E53BD4A",
      "version_external_identifier": "5647854", "product_id": "gold.100", "quantity": "2",
      "transaction_id": "8844567822225544", "original_transaction_id": "8844567822225544",
      "purchase_date": "2012-10-12 08:32:12 Etc/GMT", "purchase_date_ms": "1350030732000",
      "purchase_date_pst": "2012-10-12 01:32:12 America/Los_Angeles",
      "original_purchase_date": "2012-10-12 08:32:12 Etc/GMT",
      "original_purchase_date_ms": "1350030732000",
    ]
  }

  static func subscription(_ id: String, purchase: String, expires: String) -> [String: Any] {
    [
      "bid": Fixtures.bundleId, "bvrs": "1014", "item_id": "1476506027",
      "unique_identifier": "7468f08dc6b0cb8fa02580c5f35ef943ff3ca6da",
      "product_id": "vip.monthly", "quantity": "1", "transaction_id": id,
      "original_transaction_id": "1000000557452125", "purchase_date_ms": purchase,
      "original_purchase_date_ms": "1566378403000", "expires_date": expires,
      "expires_date_formatted": "2019-08-21 09:11:43 Etc/GMT",
      "web_order_line_item_id": "1000000046388850", "is_trial_period": "false",
    ]
  }

  @Test func theTransactionItselfIsTheReceiptAndItsAppIsBid() async throws {
    let result = await verify(["status": 0, "receipt": Self.transaction()])
    let receipt = try #require(result.value, "got \(result)")
    #expect(receipt.format == .transaction)
    #expect(receipt.bundleId == Fixtures.bundleId)
    #expect(receipt.environment == "Production")  // no `environment`: the endpoint asked
    let only = try #require(receipt.transactions.first)
    #expect(receipt.transactions.count == 1)
    #expect(only.transactionId == "8844567822225544")
    #expect(only.productId == "gold.100")
    #expect(only.quantity == 2)
    #expect(only.purchaseDate == 1_350_030_732_000)
    #expect(only.expiresDate == nil && only.appAccountToken == nil)
  }

  @Test(arguments: [0, 21006])
  func anotherAppsTransactionReceiptIsRefusedNotLeftPending(status: Int) async {
    let result = await verify(["status": status, "receipt": Self.transaction(bid: "com.other.app")])
    #expect(result == .invalid("bundle_id_mismatch"))
  }

  @Test func aSubscriptionsLatestReceiptInfoIsOneObjectWithExpiresDateInMilliseconds() async throws
  {
    let result = await verify([
      "status": 0, "auto_renew_status": 1, "auto_renew_product_id": "vip.monthly",
      "receipt": Self.subscription(
        "1000000557452125", purchase: "1566378403000", expires: "1566378703000"),
      "latest_receipt_info": Self.subscription(
        "1000000559740927", purchase: "1566378703000", expires: "1566379003000"),
      "latest_receipt": "TEFURVNU",
    ])
    let receipt = try #require(result.value, "got \(result)")
    #expect(receipt.transactions.map(\.transactionId) == ["1000000557452125", "1000000559740927"])
    #expect(receipt.transactions.map(\.expiresDate) == [1_566_378_703_000, 1_566_379_003_000])
    #expect(receipt.transactions.allSatisfy { $0.originalTransactionId == "1000000557452125" })
    #expect(receipt.transactions[0].webOrderLineItemId == "1000000046388850")
    #expect(receipt.latestReceipt == "TEFURVNU")
  }

  @Test func anExpiredSubscriptions21006StillVerifiesItsDecodedTransactions() async throws {
    let result = await verify([
      "status": 21006,
      "receipt": Self.subscription(
        "1000000557452125", purchase: "1566378403000", expires: "1566378703000"),
      "latest_expired_receipt_info": Self.subscription(
        "1000000559740927", purchase: "1566378703000", expires: "1566379003000"),
    ])
    let receipt = try #require(result.value, "got \(result)")
    #expect(receipt.transactions.map(\.expiresDate) == [1_566_378_703_000, 1_566_379_003_000])
  }

  @Test func anAppReceiptsLatestReceiptInfoMayAlsoBeASingleObject() async throws {
    let result = await verify([
      "status": 0,
      "receipt": ["bundle_id": Fixtures.bundleId, "in_app": [] as [Any]],
      "latest_receipt_info": [
        "product_id": "vip.monthly", "transaction_id": "2", "original_transaction_id": "1",
        "purchase_date_ms": "1700000000000", "expires_date": "2023-11-14 22:13:20 Etc/GMT",
        "expires_date_ms": "1702592000000",
      ],
      "pending_renewal_info": [
        [
          "original_transaction_id": "1", "product_id": "vip.monthly",
          "auto_renew_product_id": "vip.yearly", "auto_renew_status": "0",
          "expiration_intent": "1", "is_in_billing_retry_period": "0",
        ]
      ],
    ])
    let receipt = try #require(result.value, "got \(result)")
    #expect(receipt.format == .app)
    #expect(receipt.transactions.map(\.expiresDate) == [1_702_592_000_000])
    let renewal = try #require(receipt.pendingRenewals.first)
    #expect(renewal.originalTransactionId == "1" && renewal.autoRenewProductId == "vip.yearly")
    #expect(renewal.autoRenews == false && renewal.expirationIntent == 1)
    #expect(renewal.isInBillingRetryPeriod == false)
  }

  @Test func aStatusZeroAnswerNamingNoAppAtAllIsABadResponseToRetry() async {
    var transaction = Self.transaction()
    transaction["bid"] = nil
    #expect(
      await verify(["status": 0, "receipt": transaction])
        == .retryable("verify_receipt_bad_response"))
  }
}
