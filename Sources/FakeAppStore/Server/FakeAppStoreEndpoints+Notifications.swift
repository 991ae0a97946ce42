import AppStore
import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// `POST /fake/v1/refunds`: REFUND / REVOKE mark the transaction revoked (receipts then show
  /// `cancellation_date_ms`); REFUND_REVERSED clears that. Then notifies.
  func refund(_ request: Request) async throws -> Response {
    let body = try FakeJSON.decode(FakeRefundRequest.self, from: request)
    let type = body.notificationType ?? NotificationType.refund.rawValue
    let kinds: [NotificationType] = [.refund, .revoke, .refundReversed]
    guard kinds.map(\.rawValue).contains(type) else {
      throw FakeJSON.invalid("notification_type", "must be REFUND, REVOKE or REFUND_REVERSED")
    }
    let reason = body.revocationReason ?? 0
    guard reason == 0 || reason == 1 else {
      throw FakeJSON.invalid("revocation_reason", "must be 0 or 1")
    }
    // Apple's revocationType and revocationPercentage (App Store Server Notifications 2.20):
    // a prorated refund says how much, in milliunits; a full one or a revocation 100000.
    let revocationType = body.revocationType ?? "REFUND_FULL"
    guard ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"].contains(revocationType) else {
      throw FakeJSON.invalid(
        "revocation_type", "must be REFUND_FULL, REFUND_PRORATED or FAMILY_REVOKE")
    }
    let percentage = body.revocationPercentage ?? 100_000
    guard (1...100_000).contains(percentage),
      revocationType == "REFUND_PRORATED" || percentage == 100_000
    else {
      throw FakeJSON.invalid(
        "revocation_percentage", "must be 1 to 100000, and below 100000 only when prorated")
    }
    let destination = try notifyDestination(body.notifyUrl)
    let now = Self.now()
    let reversed = type == NotificationType.refundReversed.rawValue
    let transaction: FakeTransaction
    do {
      transaction = try store.setRevocation(
        of: body.transactionId, date: reversed ? nil : now, reason: reason,
        type: revocationType, percentage: percentage)
    } catch { throw Self.httpError(error) }
    let subscription =
      transaction.isAutoRenewable
      ? try? store.updateSubscription(of: transaction.transactionId).subscription : nil
    return try await notify(
      type: type, subtype: nil,
      subject: .init(
        bundleId: transaction.bundleId, environment: transaction.environment,
        transaction: transaction, subscription: subscription),
      deliver: body.deliver ?? true, to: destination, now: now)
  }

  /// `POST /fake/v1/renewals`: a new period of an auto-renewable subscription (new transaction
  /// id, same original transaction id, same receipt), then DID_RENEW, SUBSCRIBED or
  /// OFFER_REDEEMED about it; with another `product_id`, an upgrade: the new product's period
  /// begins now and DID_CHANGE_RENEWAL_PREF (UPGRADE) says so, as Apple's does.
  func renew(_ request: Request) async throws -> Response {
    let body = try FakeJSON.decode(FakeRenewalRequest.self, from: request)
    if let product = body.productId, product.isEmpty || product.utf8.count > 200 {
      throw FakeJSON.invalid("product_id", "must be 1 to 200 bytes")
    }
    if let price = body.price, price < 0 { throw FakeJSON.invalid("price", "must not be negative") }
    var token: String?
    if let text = body.appAccountToken {
      guard body.productId != nil, let uuid = UUID(uuidString: text) else {
        throw FakeJSON.invalid("app_account_token", "must be a UUID, with a product_id")
      }
      token = uuid.uuidString.lowercased()
    }
    let changing = body.productId != nil
    let type =
      body.notificationType
      ?? (changing ? NotificationType.didChangeRenewalPref : .didRenew).rawValue
    let kinds: [NotificationType] =
      changing ? [.didChangeRenewalPref, .subscribed] : [.didRenew, .subscribed, .offerRedeemed]
    guard kinds.map(\.rawValue).contains(type) else {
      throw FakeJSON.invalid(
        "notification_type",
        changing
          ? "must be DID_CHANGE_RENEWAL_PREF or SUBSCRIBED with a product_id"
          : "must be DID_RENEW, SUBSCRIBED or OFFER_REDEEMED")
    }
    let subtype =
      body.subtype
      ?? (type == NotificationType.subscribed.rawValue
        ? NotificationSubtype.resubscribe.rawValue
        : type == NotificationType.didChangeRenewalPref.rawValue
          ? NotificationSubtype.upgrade.rawValue : nil)
    let destination = try notifyDestination(body.notifyUrl)
    let now = Self.now()
    let seconds = body.expiresInSeconds ?? Self.defaultSubscriptionSeconds
    let renewed: (subscription: FakeSubscription, latest: FakeTransaction)
    do {
      renewed = try store.renew(
        body.transactionId, purchaseDate: now, expiresDate: now + seconds * 1000,
        reason: type == NotificationType.didRenew.rawValue ? "RENEWAL" : "PURCHASE",
        change: body.productId.map { ($0, body.price, token) })
    } catch { throw Self.httpError(error) }
    logger.info(
      "renewal",
      [
        "transaction_id": .string(renewed.latest.transactionId),
        "original_transaction_id": .string(renewed.latest.originalTransactionId),
      ])
    return try await notify(
      type: type, subtype: subtype,
      subject: .init(
        bundleId: renewed.latest.bundleId, environment: renewed.latest.environment,
        transaction: renewed.latest, subscription: renewed.subscription),
      deliver: body.deliver ?? true, to: destination, now: now)
  }

  /// `POST /fake/v1/notifications`: any other notification. Lifecycle types change the
  /// subscription the way Apple's event would (see `FakeSubscription.apply`).
  func notification(_ request: Request) async throws -> Response {
    let body = try FakeJSON.decode(FakeNotificationRequest.self, from: request)
    guard !body.notificationType.isEmpty else {
      throw FakeJSON.invalid("notification_type", "must not be empty")
    }
    if let grace = body.gracePeriodExpiresInSeconds, grace < 0 {
      throw FakeJSON.invalid("grace_period_expires_in_seconds", "must not be negative")
    }
    let destination = try notifyDestination(body.notifyUrl)
    let now = Self.now()
    let subject = try notificationSubject(body, now: now)
    return try await notify(
      type: body.notificationType, subtype: body.subtype, subject: subject,
      deliver: body.deliver ?? true, to: destination, now: now)
  }

  private func notificationSubject(_ body: FakeNotificationRequest, now: Int64) throws
    -> FakeNotificationSigner.Subject
  {
    guard let id = body.transactionId else {
      guard let bundleId = body.bundleId, !bundleId.isEmpty else {
        throw FakeJSON.invalid("bundle_id", "is required without a transaction_id")
      }
      let environment = body.environment ?? AppStoreEnvironment.production.rawValue
      guard Self.purchaseEnvironments.contains(environment) else {
        throw FakeJSON.invalid("environment", "must be Production, Sandbox or Xcode")
      }
      return .init(bundleId: bundleId, environment: environment)
    }
    guard let transaction = store.transaction(id) else { throw Self.transactionNotFound(id) }
    guard transaction.isAutoRenewable else {
      return .init(
        bundleId: transaction.bundleId, environment: transaction.environment,
        transaction: transaction)
    }
    let updated: (subscription: FakeSubscription, latest: FakeTransaction)
    do {
      updated = try store.updateSubscription(of: id) { subscription, latest in
        subscription.apply(
          notificationType: body.notificationType, subtype: body.subtype, latest: &latest,
          now: now, gracePeriodSeconds: body.gracePeriodExpiresInSeconds)
      }
    } catch { throw Self.httpError(error) }
    // A consumption request is about the transaction the customer asked a refund for.
    let aboutNamedTransaction =
      body.notificationType == NotificationType.consumptionRequest.rawValue
      || body.notificationType == NotificationType.refundDeclined.rawValue
    let named = store.transaction(id) ?? transaction
    return .init(
      bundleId: transaction.bundleId, environment: transaction.environment,
      transaction: aboutNamedTransaction ? named : updated.latest,
      subscription: updated.subscription)
  }

  /// `GET /fake/v1/notifications/{notification_uuid}`: every attempt to deliver it so far, as
  /// Apple's notification history shows them, and how many retries are still to come.
  func notificationHistory(_ uuid: String) throws -> Response {
    guard let record = outbox.record(of: uuid) else {
      throw HTTPError(
        404, code: "notification_not_found",
        detail: "No notification \(uuid) was sent by this fake.")
    }
    return try FakeJSON.response(
      FakeNotificationHistoryResponse(
        notificationUuid: uuid, notificationType: record.notificationType,
        subtype: record.subtype, sendAttempts: record.attempts, retriesLeft: record.retriesLeft))
  }

  private func notifyDestination(_ text: String?) throws -> URL? {
    guard let text else { return configuration.notifyURL }
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
      scheme == "http" || scheme == "https", url.host != nil
    else { throw FakeJSON.invalid("notify_url", "must be an http(s) URL") }
    return url
  }

  /// Signs the notification, delivers it when asked and possible, and answers with both.
  private func notify(
    type: String, subtype: String?, subject: FakeNotificationSigner.Subject, deliver: Bool,
    to destination: URL?, now: Int64
  ) async throws -> Response {
    let signed = try signer.sign(type: type, subtype: subtype, subject: subject, now: now)
    var response = FakeNotificationResponse(
      notificationUuid: signed.notificationUUID, notificationType: type, subtype: subtype,
      signedPayload: signed.signedPayload, transactionId: subject.transaction?.transactionId,
      signedTransaction: signed.signedTransaction)
    if deliver {
      if let destination {
        let outcome = await outbox.send(
          signed, type: type, subtype: subtype, subject: subject, to: destination)
        response.deliveredStatus = outcome.status
        response.deliveryError = outcome.error
        response.retriesLeft = outbox.record(of: signed.notificationUUID)?.retriesLeft ?? 0
      } else {
        response.deliveryError = "no notify URL configured"
      }
    }
    logger.info(
      "notification",
      [
        "notification_type": .string(type), "notification_uuid": .string(signed.notificationUUID),
        "delivered_status": response.deliveredStatus.map { .int($0) } ?? .string("none"),
      ])
    return try FakeJSON.response(response)
  }
}
