import AppStore
import Foundation
import Testing

/// Decoding of Apple's payload shapes, written out by hand from Apple's documentation.
@Suite struct DecodedModelTests {
  static let transactionJSON = """
    {
      "transactionId": "2000000847061981", "originalTransactionId": "2000000847061000",
      "webOrderLineItemId": "2000000012345678", "bundleId": "com.example.storekeeper",
      "productId": "vip.monthly", "subscriptionGroupIdentifier": "21345678",
      "purchaseDate": 1738645560000, "originalPurchaseDate": 1738000000000, "expiresDate": 1741323960000,
      "quantity": 1, "type": "Auto-Renewable Subscription",
      "appAccountToken": "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B", "inAppOwnershipType": "FAMILY_SHARED",
      "signedDate": 1739161772561, "revocationReason": 1, "revocationDate": 1739161000000,
      "isUpgraded": true, "offerType": 1, "offerIdentifier": "intro.week", "environment": "Sandbox",
      "storefront": "JPN", "storefrontId": "143462", "transactionReason": "RENEWAL", "currency": "JPY",
      "price": 230000, "offerDiscountType": "FREE_TRIAL", "appTransactionId": "704289572311406918",
      "offerPeriod": "P1W", "someFieldAppAddsLater": {"nested": [1, 2]}
    }
    """

  @Test func decodesEveryDocumentedTransactionField() throws {
    let payload = try JSONDecoder().decode(
      JWSTransactionDecodedPayload.self, from: Data(Self.transactionJSON.utf8))
    #expect(payload.transactionId == "2000000847061981")
    #expect(payload.originalTransactionId == "2000000847061000")
    #expect(payload.webOrderLineItemId == "2000000012345678")
    #expect(payload.subscriptionGroupIdentifier == "21345678")
    #expect(payload.purchaseDate == 1_738_645_560_000)
    #expect(payload.originalPurchaseDate == 1_738_000_000_000)
    #expect(payload.expiresDate == 1_741_323_960_000)
    #expect(payload.quantity == 1)
    #expect(payload.typeValue == .autoRenewableSubscription)
    #expect(payload.inAppOwnershipTypeValue == .familyShared)
    #expect(payload.signedDate == 1_739_161_772_561)
    #expect(payload.revocationReasonValue == .appIssue)
    #expect(payload.revocationDate == 1_739_161_000_000)
    #expect(payload.isUpgraded == true)
    #expect(payload.offerTypeValue == .introductory)
    #expect(payload.offerIdentifier == "intro.week")
    #expect(payload.environmentValue == .sandbox)
    #expect(payload.storefront == "JPN")
    #expect(payload.storefrontId == "143462")
    #expect(payload.transactionReasonValue == .renewal)
    #expect(payload.currency == "JPY")
    #expect(payload.price == 230_000)
    #expect(payload.offerDiscountTypeValue == .freeTrial)
    #expect(payload.appTransactionId == "704289572311406918")
    #expect(payload.offerPeriod == "P1W")

    let normalized = try #require(payload.verifiedTransaction)
    #expect(normalized.appAccountToken == "6f1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5b")
    #expect(normalized.revocationReason == 1)
    #expect(normalized.type == "Auto-Renewable Subscription")
    #expect(normalized.environment == "Sandbox")
    #expect(normalized.expiresDate == 1_741_323_960_000)
    #expect(normalized.isFamilyShared)
  }

  @Test func keepsUnknownEnumValuesRawAndDropsMistypedOptionals() throws {
    let json = """
      {"transactionId": "1", "originalTransactionId": "1", "bundleId": "b", "productId": "p",
       "type": "Hologram", "environment": "Moon", "price": "not a number", "quantity": "2"}
      """
    let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
    #expect(payload.type == "Hologram")
    #expect(payload.typeValue == nil)
    #expect(payload.environment == "Moon")
    #expect(payload.environmentValue == nil)
    #expect(payload.price == nil)
    #expect(payload.quantity == nil)
    #expect(payload.verifiedTransaction == nil)  // no purchase date
  }

  @Test func decodesEveryDocumentedRenewalInfoField() throws {
    let json = """
      {"originalTransactionId": "2000000847061000", "autoRenewProductId": "vip.yearly", "productId": "vip.monthly",
       "autoRenewStatus": 0, "renewalPrice": 9990, "currency": "USD", "signedDate": 1739161772561,
       "environment": "Production", "recentSubscriptionStartDate": 1738000000000, "renewalDate": 1741323960000,
       "expirationIntent": 2, "gracePeriodExpiresDate": 1741900000000, "isInBillingRetryPeriod": true,
       "offerType": 4, "offerIdentifier": "winback.1", "priceIncreaseStatus": 1,
       "eligibleWinBackOfferIds": ["winback.1", "winback.2"], "appTransactionId": "704289572311406918",
       "offerPeriod": "P1M", "offerDiscountType": "PAY_AS_YOU_GO",
       "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}
      """
    let info = try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: Data(json.utf8))
    #expect(info.autoRenewStatusValue == .off)
    #expect(info.autoRenewProductId == "vip.yearly")
    #expect(info.renewalPrice == 9990)
    #expect(info.recentSubscriptionStartDate == 1_738_000_000_000)
    #expect(info.renewalDate == 1_741_323_960_000)
    #expect(info.expirationIntentValue == .billingError)
    #expect(info.gracePeriodExpiresDate == 1_741_900_000_000)
    #expect(info.isInBillingRetryPeriod == true)
    #expect(info.offerTypeValue == .winBack)
    #expect(info.priceIncreaseStatusValue == .customerConsentedOrWasNotifiedWithoutNeedingConsent)
    #expect(info.eligibleWinBackOfferIds == ["winback.1", "winback.2"])
    #expect(info.offerPeriod == "P1M")
    #expect(info.offerDiscountTypeValue == .payAsYouGo)
    #expect(info.appTransactionId == "704289572311406918")
    #expect(info.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
  }

  @Test func decodesANotificationEnvelope() throws {
    let json = """
      {"notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
       "version": "2.0", "signedDate": 1739161772561,
       "data": {"appAppleId": 1234567890, "bundleId": "com.example.storekeeper", "bundleVersion": "42",
                "environment": "Production", "signedTransactionInfo": "a.b.c", "signedRenewalInfo": "d.e.f", "status": 1},
       "externalPurchaseToken": {"externalPurchaseId": "SANDBOX_1", "tokenCreationDate": 1, "appAppleId": 2, "bundleId": "x"}}
      """
    let payload = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(json.utf8))
    #expect(payload.notificationTypeValue == .subscribed)
    #expect(payload.subtypeValue == .initialBuy)
    #expect(payload.version == "2.0")
    #expect(payload.data?.statusValue == .active)
    #expect(payload.data?.appAppleId == 1_234_567_890)
    #expect(payload.data?.signedRenewalInfo == "d.e.f")
    #expect(payload.externalPurchaseToken?.externalPurchaseId == "SANDBOX_1")
  }
}
