import AppStore
import Foundation

/// Builds and signs App Store Server Notifications V2 the way Apple does: a JWS of
/// `ResponseBodyV2DecodedPayload` whose `data` nests the signed transaction and, for
/// auto-renewable subscriptions, the signed renewal info and the subscription status.
struct FakeNotificationSigner: Sendable {
  struct Signed: Sendable {
    var notificationUUID: String
    var signedPayload: String
    /// The nested `signedTransactionInfo`, when there is one.
    var signedTransaction: String?
  }

  /// What the notification is about.
  struct Subject: Sendable {
    var bundleId: String
    var environment: String
    var transaction: FakeTransaction?
    var subscription: FakeSubscription?
  }

  var authority: FakeCertificateAuthority
  var appAppleId: Int64

  func sign(type: String, subtype: String?, subject: Subject, now: Int64) throws -> Signed {
    if type == NotificationType.rescindConsent.rawValue {
      return try signAboutApp(type: type, subtype: subtype, subject: subject, now: now)
    }
    var data = NotificationData(
      // Apple leaves appAppleId out of sandbox notifications.
      appAppleId: subject.environment == AppStoreEnvironment.production.rawValue
        ? appAppleId : nil,
      bundleId: subject.bundleId, bundleVersion: "1", environment: subject.environment)
    if let transaction = subject.transaction {
      data.signedTransactionInfo = try authority.sign(transaction.payload(signedDate: now))
      if let subscription = subject.subscription {
        data.signedRenewalInfo = try authority.sign(
          subscription.renewalInfo(latest: transaction, signedDate: now))
        data.status = subscription.status(latest: transaction, now: now)
      }
    }
    if type == NotificationType.consumptionRequest.rawValue {
      data.consumptionRequestReason = "UNINTENDED_PURCHASE"
    }
    let uuid = UUID().uuidString.lowercased()
    let payload = ResponseBodyV2DecodedPayload(
      notificationType: type, subtype: subtype, notificationUUID: uuid, version: "2.0",
      signedDate: now, data: data)
    return Signed(
      notificationUUID: uuid, signedPayload: try authority.sign(payload),
      signedTransaction: data.signedTransactionInfo)
  }

  /// A notification about the app rather than a purchase (RESCIND_CONSENT): `appData` with the
  /// account's signed app transaction, and no `data`, as Apple sends it.
  private func signAboutApp(type: String, subtype: String?, subject: Subject, now: Int64) throws
    -> Signed
  {
    let production = subject.environment == AppStoreEnvironment.production.rawValue
    var app = AppData(
      appAppleId: production ? appAppleId : nil, bundleId: subject.bundleId,
      environment: subject.environment)
    if let transaction = subject.transaction {
      app.signedAppTransactionInfo = try authority.sign(
        AppTransaction(
          receiptType: subject.environment, appAppleId: production ? appAppleId : nil,
          bundleId: subject.bundleId, applicationVersion: "1", receiptCreationDate: now,
          originalPurchaseDate: transaction.originalPurchaseDate,
          originalApplicationVersion: "1", appTransactionId: transaction.appTransactionId,
          originalPlatform: "iOS"))
    }
    let uuid = UUID().uuidString.lowercased()
    let payload = ResponseBodyV2DecodedPayload(
      notificationType: type, subtype: subtype, notificationUUID: uuid, version: "2.0",
      signedDate: now, appData: app)
    return Signed(notificationUUID: uuid, signedPayload: try authority.sign(payload))
  }
}
