import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

@Suite struct FakeNotificationTests {
  static func subscription(_ fake: FakeHarness, _ fields: [String: Any] = [:]) async throws
    -> FakeHarness.Reply
  {
    var body: [String: Any] = ["type": "Auto-Renewable Subscription", "product_id": "vip.month"]
    body.merge(fields) { _, new in new }
    return try await fake.purchase(body)
  }

  static func verified(_ fake: FakeHarness, _ reply: FakeHarness.Reply) throws
    -> VerifiedNotification
  {
    let signed = try #require(reply.string("signed_payload"), "\(reply.json)")
    let result = try fake.signedDataVerifier().verifyNotification(signed)
    return try #require(result.value, "\(result)")
  }

  @Test func aRefundIsDeliveredSignedAndVerifiesWithItsRevokedTransaction() async throws {
    try await NotificationReceiver.with { receiver in
      try await FakeHarness.with({ $0.notifyURL = receiver.url }) { fake in
        let purchase = try await fake.purchase()
        let id = try #require(purchase.string("transaction_id"))
        let reply = try await fake.post("fake/v1/refunds", ["transaction_id": id])
        #expect(reply.status == 200)
        #expect(reply["delivered_status"] as? Int == 200)
        #expect(reply.string("transaction_id") == id)
        let signed = try #require(reply.string("signed_payload"))
        #expect(receiver.signedPayloads == [signed])

        let result = try fake.signedDataVerifier().verifyNotification(signed)
        let notification = try #require(result.value, "\(result)")
        #expect(notification.payload.notificationTypeValue == .refund)
        #expect(notification.payload.notificationUUID == reply.string("notification_uuid"))
        #expect(notification.payload.version == "2.0")
        #expect(notification.payload.data?.appAppleId == 1_234_567_890)
        #expect(notification.payload.data?.bundleVersion == "1")
        #expect(notification.payload.data?.status == nil)
        #expect(notification.renewalInfo == nil)
        let transaction = try #require(notification.transaction)
        #expect(transaction.transactionId == id)
        #expect(transaction.revocationDate != nil)
        #expect(transaction.revocationReasonValue != nil)
      }
    }
  }

  @Test func refundingASubscriptionRevokesItAndSaysSoInTheStatus() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await Self.subscription(fake).string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/refunds", ["transaction_id": id, "notification_type": "REVOKE", "deliver": false])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.notificationTypeValue == .revoke)
      #expect(notification.payload.data?.statusValue == .revoked)
      #expect(notification.renewalInfo?.originalTransactionId == id)
      #expect(notification.transaction?.revocationDate != nil)
    }
  }

  @Test func theReceiverStatusIsReportedAsIs() async throws {
    try await NotificationReceiver.with(statuses: [500]) { receiver in
      try await FakeHarness.with { fake in
        let reply = try await fake.post(
          "fake/v1/notifications",
          [
            "notification_type": "TEST", "bundle_id": FakeHarness.bundleId,
            "notify_url": receiver.url.absoluteString,
          ])
        #expect(reply["delivered_status"] as? Int == 500)
        #expect(receiver.signedPayloads.count == 1)
      }
    }
  }

  @Test func undeliverableOrUndeliveredNotificationsReportANullStatus() async throws {
    try await FakeHarness.with { fake in
      let nowhere = try await fake.post(
        "fake/v1/notifications", ["notification_type": "TEST", "bundle_id": FakeHarness.bundleId])
      #expect(nowhere.json.keys.contains("delivered_status"))
      #expect(nowhere["delivered_status"] is NSNull)
      #expect(nowhere.string("delivery_error") == "no notify URL configured")

      let refused = try await fake.post(
        "fake/v1/notifications",
        [
          "notification_type": "TEST", "bundle_id": FakeHarness.bundleId,
          "notify_url": NotificationReceiver.unreachableURL.absoluteString,
        ])
      #expect(refused["delivered_status"] is NSNull)
      #expect(refused.string("delivery_error") != nil)
    }
  }

  @Test func deliverFalseOnlySigns() async throws {
    try await NotificationReceiver.with { receiver in
      try await FakeHarness.with({ $0.notifyURL = receiver.url }) { fake in
        let id = try #require(try await fake.purchase().string("transaction_id"))
        let reply = try await fake.post(
          "fake/v1/refunds", ["transaction_id": id, "deliver": false])
        #expect(reply["delivered_status"] is NSNull)
        #expect(reply.string("signed_payload") != nil)
        #expect(receiver.signedPayloads.isEmpty)
      }
    }
  }

  @Test func aRenewalMakesANewTransactionOfTheSameSubscriptionInTheSameReceipt() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await Self.subscription(fake, ["apple_account": "carol"])
      let original = try #require(purchase.string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/renewals",
        ["transaction_id": original, "expires_in_seconds": 3600, "deliver": false])
      #expect(reply.status == 200)
      let renewed = try #require(reply.string("transaction_id"))
      #expect(renewed != original)

      let result = try fake.signedDataVerifier().verifyNotification(
        try #require(reply.string("signed_payload")))
      let notification = try #require(result.value, "\(result)")
      #expect(notification.payload.notificationTypeValue == .didRenew)
      #expect(notification.payload.data?.statusValue == .active)
      let transaction = try #require(notification.transaction)
      #expect(transaction.transactionId == renewed)
      #expect(transaction.originalTransactionId == original)
      #expect(transaction.transactionReasonValue == .renewal)
      #expect(transaction.webOrderLineItemId != nil)
      let purchaseDate = try #require(transaction.purchaseDate)
      #expect(transaction.expiresDate == purchaseDate + 3_600_000)
      let renewal = try #require(notification.renewalInfo)
      #expect(renewal.originalTransactionId == original)
      #expect(renewal.autoRenewStatusValue == .on)
      #expect(renewal.renewalDate == transaction.expiresDate)

      let receipt = try #require(purchase.string("receipt"))
      let verified = try await fake.receiptVerifier().verify(receipt: receipt)
      #expect(verified.value?.transactions.map(\.transactionId) == [original, renewed])
    }
  }

  @Test func subscribedDefaultsToResubscribe() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await Self.subscription(fake).string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/renewals",
        ["transaction_id": id, "notification_type": "SUBSCRIBED", "deliver": false])
      let payload = try decodedPayload(try #require(reply.string("signed_payload")))
      #expect(payload["notificationType"] as? String == "SUBSCRIBED")
      #expect(payload["subtype"] as? String == "RESUBSCRIBE")
    }
  }

  @Test func renewingSomethingThatIsNotASubscriptionIsRefused() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await fake.purchase().string("transaction_id"))
      let consumable = try await fake.post("fake/v1/renewals", ["transaction_id": id])
      #expect(consumable.status == 422)
      #expect(consumable.string("code") == "not_auto_renewable")
      let unknown = try await fake.post("fake/v1/renewals", ["transaction_id": "2999"])
      #expect(unknown.status == 404)
      let refund = try await fake.post("fake/v1/refunds", ["transaction_id": "2999"])
      #expect(refund.status == 404)
    }
  }

  @Test func failingToRenewIntoAGracePeriodSignsTheGraceEnd() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await Self.subscription(fake).string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/notifications",
        [
          "notification_type": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD",
          "transaction_id": id, "grace_period_expires_in_seconds": 86_400, "deliver": false,
        ])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.subtypeValue == .gracePeriod)
      #expect(notification.payload.data?.statusValue == .billingGracePeriod)
      let renewal = try #require(notification.renewalInfo)
      let signedDate = try #require(notification.payload.signedDate)
      #expect(renewal.gracePeriodExpiresDate == signedDate + 86_400_000)
      #expect(renewal.isInBillingRetryPeriod == true)
      let transaction = try #require(notification.transaction)
      #expect(try #require(transaction.expiresDate) <= signedDate)
    }
  }

  @Test func failingToRenewWithoutGraceIsBillingRetry() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await Self.subscription(fake).string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/notifications",
        ["notification_type": "DID_FAIL_TO_RENEW", "transaction_id": id, "deliver": false])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.data?.statusValue == .billingRetry)
      #expect(notification.renewalInfo?.gracePeriodExpiresDate == nil)
    }
  }

  @Test func expiryEndsThePeriodAndSaysWhy() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await Self.subscription(fake)
      let id = try #require(purchase.string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/notifications",
        [
          "notification_type": "EXPIRED", "subtype": "VOLUNTARY", "transaction_id": id,
          "deliver": false,
        ])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.data?.statusValue == .expired)
      #expect(notification.renewalInfo?.expirationIntentValue == .customerCancelled)
      #expect(notification.renewalInfo?.autoRenewStatusValue == .off)
      let expires = try #require(notification.transaction?.expiresDate)
      #expect(expires <= (notification.payload.signedDate ?? 0))
      // Later receipts agree: the period has ended.
      let receipt = try #require(purchase.string("receipt"))
      let verified = try await fake.receiptVerifier().verify(receipt: receipt)
      #expect(verified.value?.transactions.first?.expiresDate == expires)
    }
  }

  @Test func aSubscriptionNotificationCarriesTheLatestPeriod() async throws {
    try await FakeHarness.with { fake in
      let original = try #require(try await Self.subscription(fake).string("transaction_id"))
      let renewal = try await fake.post(
        "fake/v1/renewals", ["transaction_id": original, "deliver": false])
      let reply = try await fake.post(
        "fake/v1/notifications",
        ["notification_type": "GRACE_PERIOD_EXPIRED", "transaction_id": original, "deliver": false])
      #expect(reply.string("transaction_id") == renewal.string("transaction_id"))
    }
  }

  @Test func aTestNotificationNeedsNoTransactionAndSandboxLeavesOutTheAppAppleId() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.post(
        "fake/v1/notifications",
        [
          "notification_type": "TEST", "bundle_id": FakeHarness.bundleId,
          "environment": "Sandbox",
        ])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.notificationTypeValue == .test)
      #expect(notification.payload.data?.environment == "Sandbox")
      #expect(notification.payload.data?.appAppleId == nil)
      #expect(notification.payload.data?.signedTransactionInfo == nil)
      #expect(notification.transaction == nil)
      let missing = try await fake.post("fake/v1/notifications", ["notification_type": "TEST"])
      #expect(missing.status == 422)
    }
  }

  @Test func anUnknownNotificationTypeIsStillSignedAsGiven() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await fake.purchase().string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/notifications",
        [
          "notification_type": "SOMETHING_NEW", "subtype": "ODD", "transaction_id": id,
          "deliver": false,
        ])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.notificationType == "SOMETHING_NEW")
      #expect(notification.payload.notificationTypeValue == nil)
      #expect(notification.payload.subtype == "ODD")
      #expect(notification.transaction?.transactionId == id)
    }
  }

  @Test func theConfiguredAppAppleIdIsSignedAndChecked() async throws {
    try await FakeHarness.with({ $0.appAppleId = 42 }) { fake in
      let reply = try await fake.post(
        "fake/v1/notifications", ["notification_type": "TEST", "bundle_id": FakeHarness.bundleId])
      let signed = try #require(reply.string("signed_payload"))
      #expect(try fake.signedDataVerifier().verifyNotification(signed).value != nil)
      var configuration = try fake.appStoreConfiguration()
      configuration.appAppleId = 43
      let strict = try SignedDataVerifier(configuration: configuration)
      #expect(strict.verifyNotification(signed) == .invalid("app_apple_id_mismatch"))
    }
  }

  @Test func consumptionRequestsNameTheTransactionAndAReason() async throws {
    try await FakeHarness.with { fake in
      let id = try #require(try await fake.purchase().string("transaction_id"))
      let reply = try await fake.post(
        "fake/v1/notifications",
        ["notification_type": "CONSUMPTION_REQUEST", "transaction_id": id, "deliver": false])
      let notification = try Self.verified(fake, reply)
      #expect(notification.payload.data?.consumptionRequestReason != nil)
      #expect(notification.transaction?.transactionId == id)
    }
  }
}
