import HTTP

extension FakeAppStoreEndpoints {
  /// `POST /fake/v1/subscriptions/state`: edits the subscription's latest period and renewal
  /// state directly, with no notification signed or sent: the lost-notification case that
  /// reconciliation against Get All Subscription Statuses exists for.
  func setSubscriptionState(_ request: Request) throws -> Response {
    let body = try FakeJSON.decode(FakeSubscriptionStateRequest.self, from: request)
    let limit: Int64 = 10 * 365 * 86_400
    for (field, value) in [
      ("expires_in_seconds", body.expiresInSeconds),
      ("grace_period_expires_in_seconds", body.gracePeriodExpiresInSeconds),
    ] {
      if let value, abs(value) > limit {
        throw FakeJSON.invalid(field, "must be within ten years of now")
      }
    }
    let now = Self.now()
    let updated: (subscription: FakeSubscription, latest: FakeTransaction)
    do {
      updated = try store.updateSubscription(of: body.transactionId) { subscription, latest in
        if let seconds = body.expiresInSeconds { latest.expiresDate = now + seconds * 1000 }
        if let retry = body.billingRetry {
          subscription.isInBillingRetryPeriod = retry
          subscription.gracePeriodExpiresDate =
            retry
            ? body.gracePeriodExpiresInSeconds.flatMap { $0 > 0 ? now + $0 * 1000 : nil } : nil
        }
        if let on = body.autoRenew { subscription.autoRenewStatus = on ? 1 : 0 }
      }
    } catch { throw Self.httpError(error) }
    logger.info(
      "subscription state changed without a notification",
      ["original_transaction_id": .string(updated.subscription.originalTransactionId)])
    return try FakeJSON.response(
      FakeSubscriptionStateResponse(
        originalTransactionId: updated.subscription.originalTransactionId,
        latestTransactionId: updated.latest.transactionId,
        status: updated.subscription.status(latest: updated.latest, now: now),
        expiresDateMs: updated.latest.expiresDate,
        gracePeriodExpiresDateMs: updated.subscription.gracePeriodExpiresDate))
  }
}
