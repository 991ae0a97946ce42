import AppStore
import Foundation
import Testing

/// Apple's own signed test data (app-store-server-library-python's tests/resources), verified
/// as its `test_payload_verification.py` verifies it: given testCA as the root, bundle id
/// com.example and app apple id 1234. Each test names Apple's expectation; where Apple says
/// VERIFICATION_FAILURE or INVALID_APP_IDENTIFIER, Storekeeper names the failed check.
@Suite struct AppleLibraryVectorTests {
  static var testCAPEM: String {
    let body = (Data(base64Encoded: AppleLibraryVectors.testCA) ?? Data())
      .base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
    return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
  }

  /// Apple's `get_signed_data_verifier(environment, "com.example")`; `now` (seconds) is when
  /// a payload without signedDate is checked, pinned so the test data's 2033 expiry cannot
  /// make these tests depend on the day they run.
  static func verifier(
    environments: Set<String> = ["Sandbox"], bundleId: String = "com.example",
    appAppleId: Int64 = 1234
  ) throws -> SignedDataVerifier {
    var configuration = AppStoreConfiguration(bundleId: bundleId)
    configuration.appAppleId = appAppleId
    configuration.allowedEnvironments = environments
    configuration.extraRootCertificatesPEM = [testCAPEM]
    return try SignedDataVerifier(
      configuration: configuration, now: { AppleLibraryVectors.effectiveDate })
  }

  // test_transaction_info_decoding: accepted. Its x5c ends in another certificate of testCA's
  // key, which Storekeeper refused as untrusted_root before issue 26.
  @Test func acceptsApplesTransactionOfThreeFields() throws {
    let transaction = try #require(
      try Self.verifier().verifyTransaction(AppleLibraryVectors.transactionInfo).value)
    #expect(transaction.environment == "Sandbox")
    #expect(transaction.bundleId == "com.example")
    #expect(transaction.signedDate == 1_672_956_154_000)
    #expect(transaction.transactionId == nil && transaction.productId == nil)
  }

  // Verified is not settleable: nothing to credit without an id, product or purchase date.
  @Test func applesTransactionOfThreeFieldsIsRefusedForSettlingWithItsOwnCode() throws {
    let transaction = try #require(
      try Self.verifier().verifyTransaction(AppleLibraryVectors.transactionInfo).value)
    #expect(transaction.verifiedTransaction == nil)
    #expect(throws: RefusalReason.incompleteTransaction) { try transaction.requireSettleable() }
  }

  // test_renewal_info_decoding: accepted, environment Sandbox.
  @Test func acceptsApplesRenewalInfoOfTwoFields() throws {
    let renewal = try #require(
      try Self.verifier().verifyRenewalInfo(AppleLibraryVectors.renewalInfo).value)
    #expect(renewal.environment == "Sandbox")
    #expect(renewal.originalTransactionId == nil)
  }

  // test_app_store_server_notification_decoding: accepted, type TEST.
  @Test func acceptsApplesTestNotification() throws {
    let notification = try #require(
      try Self.verifier().verifyNotification(AppleLibraryVectors.testNotification).value)
    #expect(notification.payload.notificationType == "TEST")
    #expect(notification.payload.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
    #expect(notification.transaction == nil && notification.renewalInfo == nil)
  }

  // test_app_store_server_notification_decoding_production: INVALID_ENVIRONMENT.
  @Test func refusesApplesSandboxNotificationWhereOnlyProductionIsAllowed() throws {
    let verifier = try Self.verifier(environments: ["Production"])
    #expect(
      verifier.verifyNotification(AppleLibraryVectors.testNotification)
        == .invalid("environment_not_allowed"))
  }

  // test_wrong_app_apple_id_for_server_notification: INVALID_APP_IDENTIFIER from a Production
  // verifier. Apple's verifier checks the app apple id first; Storekeeper checks it on
  // Production notifications only, and this one is from the sandbox, which is not allowed.
  @Test func refusesApplesNotificationForAnotherAppAppleIdAsNotAllowedHere() throws {
    let verifier = try Self.verifier(environments: ["Production"], appAppleId: 1235)
    #expect(
      verifier.verifyNotification(AppleLibraryVectors.testNotification)
        == .invalid("environment_not_allowed"))
  }

  // test_wrong_bundle_id_for_server_notification: INVALID_APP_IDENTIFIER. The payload has no
  // signedDate, so its chain is checked at `now`, as Apple's library does.
  @Test func refusesApplesNotificationForAnotherBundle() throws {
    let verifier = try Self.verifier(bundleId: "com.examplex")
    #expect(
      verifier.verifyNotification(AppleLibraryVectors.wrongBundleId)
        == .invalid("bundle_id_mismatch"))
  }

  // test_missing_x5c_header: VERIFICATION_FAILURE.
  @Test func refusesApplesNotificationWithoutX5C() throws {
    #expect(
      try Self.verifier().verifyNotification(AppleLibraryVectors.missingX5CHeaderClaim)
        == .invalid("invalid_certificate_chain_length"))
  }

  // test_malformed_jwt_with_too_many_parts, test_malformed_jwt_with_malformed_data:
  // VERIFICATION_FAILURE.
  @Test func refusesMalformedTokensAsApplesTestsDo() throws {
    let verifier = try Self.verifier()
    #expect(verifier.verifyNotification("a.b.c.d") == .invalid("malformed_jws"))
    #expect(verifier.verifyNotification("a.b.c") == .invalid("malformed_jws"))
  }

  // A chain to testCA is trusted only when testCA is configured.
  @Test func refusesApplesTestDataWhenOnlyApplesRealRootIsTrusted() throws {
    var configuration = AppStoreConfiguration(bundleId: "com.example")
    configuration.allowedEnvironments = ["Sandbox"]
    let verifier = try SignedDataVerifier(configuration: configuration)
    #expect(
      verifier.verifyTransaction(AppleLibraryVectors.transactionInfo)
        == .invalid("untrusted_root"))
  }

  // test_decoded_payloads.py: every documented field of signedTransaction.json decodes.
  @Test func decodesApplesFullTransactionModel() throws {
    let transaction = try JSONDecoder().decode(
      JWSTransactionDecodedPayload.self, from: Data(AppleLibraryVectors.signedTransactionJSON.utf8))
    #expect(transaction.transactionId == "23456")
    #expect(transaction.originalTransactionId == "12345")
    #expect(transaction.webOrderLineItemId == "34343")
    #expect(transaction.productId == "com.example.product")
    #expect(transaction.subscriptionGroupIdentifier == "55555")
    #expect(transaction.purchaseDate == 1_698_148_900_000)
    #expect(transaction.expiresDate == 1_698_149_000_000)
    #expect(transaction.typeValue == .autoRenewableSubscription)
    #expect(transaction.inAppOwnershipTypeValue == .purchased)
    #expect(transaction.revocationReason == 1)
    #expect(transaction.isUpgraded == true)
    #expect(transaction.offerTypeValue == .introductory)
    #expect(transaction.environmentValue == .localTesting)
    #expect(transaction.transactionReasonValue == .purchase)
    #expect(transaction.price == 10990 && transaction.currency == "USD")
    #expect(transaction.offerDiscountTypeValue == .payAsYouGo)
    #expect(transaction.appTransactionId == "71134" && transaction.offerPeriod == "P1Y")
  }

  // test_decoded_payloads.py: every documented field of signedRenewalInfo.json decodes.
  @Test func decodesApplesFullRenewalInfoModel() throws {
    let renewal = try JSONDecoder().decode(
      JWSRenewalInfoDecodedPayload.self,
      from: Data(AppleLibraryVectors.signedRenewalInfoJSON.utf8))
    #expect(renewal.originalTransactionId == "12345")
    #expect(renewal.autoRenewProductId == "com.example.product.2")
    #expect(renewal.expirationIntentValue == .customerCancelled)
    #expect(renewal.autoRenewStatusValue == .on)
    #expect(renewal.isInBillingRetryPeriod == true)
    #expect(renewal.priceIncreaseStatusValue == .customerHasNotResponded)
    #expect(renewal.gracePeriodExpiresDate == 1_698_148_900_000)
    #expect(renewal.offerTypeValue == .promotional)
    #expect(renewal.renewalPrice == 9990)
    #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
    #expect(renewal.appTransactionId == "71134")
  }
}
