import AppStore
import FakeAppStore
import Foundation
import Testing

@Suite struct NotificationVerificationTests {
  let authority: FakeCertificateAuthority

  init() throws {
    authority = try FakeCertificateAuthority()
  }

  func verifier(
    appAppleId: Int64? = 1_234_567_890, environments: Set<String> = ["Production", "Sandbox"]
  ) throws
    -> SignedDataVerifier
  {
    var configuration = Fixtures.configuration(trusting: authority, environments: environments)
    configuration.appAppleId = appAppleId
    return try SignedDataVerifier(configuration: configuration)
  }

  func renewal(environment: String = "Production") -> JWSRenewalInfoDecodedPayload {
    JWSRenewalInfoDecodedPayload(
      originalTransactionId: "2000000000000001", autoRenewProductId: "vip.monthly",
      productId: "vip.monthly",
      autoRenewStatus: 1, signedDate: Fixtures.nowMilliseconds, environment: environment)
  }

  func notification(
    type: String = "REFUND", bundleId: String = Fixtures.bundleId,
    environment: String = "Production",
    appAppleId: Int64? = 1_234_567_890, transaction: String? = nil, renewal: String? = nil
  ) -> ResponseBodyV2DecodedPayload {
    ResponseBodyV2DecodedPayload(
      notificationType: type, subtype: nil, notificationUUID: UUID().uuidString.lowercased(),
      version: "2.0",
      signedDate: Fixtures.nowMilliseconds,
      data: NotificationData(
        appAppleId: appAppleId, bundleId: bundleId, bundleVersion: "42", environment: environment,
        signedTransactionInfo: transaction, signedRenewalInfo: renewal, status: 1))
  }

  @Test func verifiesANotificationAndItsNestedSignedData() throws {
    let transaction = Fixtures.transaction()
    let payload = notification(
      type: "DID_RENEW", transaction: try authority.sign(transaction),
      renewal: try authority.sign(renewal()))
    let result = try verifier().verifyNotification(try authority.sign(payload))
    let verified = try #require(result.value)
    #expect(verified.payload == payload)
    #expect(verified.payload.notificationTypeValue == .didRenew)
    #expect(verified.transaction == transaction)
    #expect(verified.renewalInfo?.autoRenewStatusValue == .on)
  }

  @Test func refusesANotificationForAnotherApp() throws {
    let token = try authority.sign(notification(bundleId: "com.example.other"))
    #expect(try verifier().verifyNotification(token) == .invalid("bundle_id_mismatch"))
  }

  @Test func refusesAProductionNotificationForAnotherAppleId() throws {
    let token = try authority.sign(notification(appAppleId: 99))
    #expect(try verifier().verifyNotification(token) == .invalid("app_apple_id_mismatch"))
    #expect(try verifier(appAppleId: nil).verifyNotification(token).value != nil)
  }

  @Test func sandboxNotificationsNeedNoAppAppleId() throws {
    let token = try authority.sign(notification(environment: "Sandbox", appAppleId: nil))
    #expect(try verifier().verifyNotification(token).value != nil)
    #expect(
      try verifier(environments: ["Production"]).verifyNotification(token)
        == .invalid("environment_not_allowed"))
  }

  @Test func refusesANotificationWhoseNestedTransactionIsForged() throws {
    let stranger = try FakeCertificateAuthority()
    let token = try authority.sign(
      notification(transaction: try stranger.sign(Fixtures.transaction())))
    #expect(try verifier().verifyNotification(token) == .invalid("untrusted_root"))
  }

  @Test func refusesANotificationWhoseNestedTransactionIsForAnotherApp() throws {
    let nested = try authority.sign(Fixtures.transaction(bundleId: "com.example.other"))
    let token = try authority.sign(notification(transaction: nested))
    #expect(try verifier().verifyNotification(token) == .invalid("bundle_id_mismatch"))
  }

  @Test func verifiesASummaryNotificationByItsSummary() throws {
    let payload = ResponseBodyV2DecodedPayload(
      notificationType: "RENEWAL_EXTENSION", subtype: "SUMMARY", notificationUUID: "u-1",
      signedDate: Fixtures.nowMilliseconds,
      summary: NotificationSummary(
        requestIdentifier: "r", environment: "Production", appAppleId: 1_234_567_890,
        bundleId: Fixtures.bundleId,
        productId: "vip.monthly", storefrontCountryCodes: ["USA"], failedCount: 0, succeededCount: 3
      ))
    let verified = try verifier().verifyNotification(try authority.sign(payload))
    #expect(verified.value?.payload.summary?.succeededCount == 3)
  }

  @Test func verifiesRenewalInfoAlone() throws {
    let info = renewal(environment: "Sandbox")
    let token = try authority.sign(info)
    #expect(try verifier().verifyRenewalInfo(token) == .valid(info))
    #expect(
      try verifier(environments: ["Production"]).verifyRenewalInfo(token)
        == .invalid("environment_not_allowed"))
  }

  /// RESCIND_CONSENT: `appData` instead of `data`, its app transaction verified like any
  /// signed data.
  func rescindConsent(app: String?, bundleId: String = Fixtures.bundleId)
    -> ResponseBodyV2DecodedPayload
  {
    ResponseBodyV2DecodedPayload(
      notificationType: "RESCIND_CONSENT", notificationUUID: UUID().uuidString.lowercased(),
      version: "2.0", signedDate: Fixtures.nowMilliseconds,
      appData: AppData(
        appAppleId: 1_234_567_890, bundleId: bundleId, environment: "Production",
        signedAppTransactionInfo: app))
  }

  func appTransaction(bundleId: String = Fixtures.bundleId, receiptType: String = "Production")
    -> AppTransaction
  {
    AppTransaction(
      receiptType: receiptType, appAppleId: 1_234_567_890, bundleId: bundleId,
      receiptCreationDate: Fixtures.nowMilliseconds, appTransactionId: "704289572311406918")
  }

  @Test func verifiesRescindConsentAndTheAppTransactionItCarries() throws {
    let token = try authority.sign(rescindConsent(app: try authority.sign(appTransaction())))
    guard case .valid(let verified) = try verifier().verifyNotification(token) else {
      Issue.record("expected RESCIND_CONSENT to verify")
      return
    }
    #expect(verified.payload.notificationTypeValue == .rescindConsent)
    #expect(verified.appTransaction?.appTransactionId == "704289572311406918")
    #expect(verified.transaction == nil)
  }

  @Test func refusesRescindConsentWhoseAppTransactionIsForgedOrAnotherAppsOrEnvironments() throws {
    let stranger = try FakeCertificateAuthority()
    let forged = try authority.sign(rescindConsent(app: try stranger.sign(appTransaction())))
    #expect(try verifier().verifyNotification(forged) == .invalid("untrusted_root"))
    let other = try authority.sign(
      rescindConsent(app: try authority.sign(appTransaction(bundleId: "com.example.other"))))
    #expect(try verifier().verifyNotification(other) == .invalid("bundle_id_mismatch"))
    let xcode = try authority.sign(
      rescindConsent(app: try authority.sign(appTransaction(receiptType: "Xcode"))))
    #expect(try verifier().verifyNotification(xcode) == .invalid("environment_not_allowed"))
    // The envelope's own app is checked from `appData`.
    let elsewhere = try authority.sign(
      rescindConsent(app: nil, bundleId: "com.example.other"))
    #expect(try verifier().verifyNotification(elsewhere) == .invalid("bundle_id_mismatch"))
  }
}
