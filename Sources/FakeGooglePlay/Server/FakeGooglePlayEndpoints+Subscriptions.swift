import Foundation
import GooglePlay
import HTTP

extension FakeGooglePlayEndpoints {
  /// `POST /fake/v1/subscriptions` `{product_id, base_plan_id?, offer_id?, period_seconds?,
  /// trial_seconds?, test?, pending?, obfuscated_account_id?, linked_purchase_token?}`: a new
  /// subscription (SUBSCRIPTION_PURCHASED). With `trial_seconds` its first period is a free
  /// trial of that length (its order costs nothing, `FREE_TRIAL`); renewals last
  /// `period_seconds`. With `linked_purchase_token` it replaces that one (upgrade,
  /// downgrade, re-signup), which expires with a replacement cancellation.
  func makeSubscription(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    let productId = try body.requiredString("product_id")
    let period = try body.double("period_seconds") ?? 30 * 86_400
    guard period > 0 else { throw FakeControlBody.invalid("period_seconds", "must be positive") }
    let trial = try body.double("trial_seconds")
    if let trial, trial <= 0 {
      throw FakeControlBody.invalid("trial_seconds", "must be positive")
    }
    let accountId = try body.string("obfuscated_account_id")
    if let accountId, accountId.count > 64 {
      throw FakeControlBody.invalid("obfuscated_account_id", "must be at most 64 characters")
    }
    let linked = try body.string("linked_purchase_token")
    let pending = try body.bool("pending") ?? false
    // The plan's price as Google bills it (4.99 USD unless the test names another).
    let priceMicros = try body.int("price_micros") ?? 4_990_000
    guard (0...1_000_000_000_000).contains(priceMicros) else {
      throw FakeControlBody.invalid("price_micros", "must be between 0 and 10^12")
    }
    let now = state.nowMillis()
    let periodMillis = Int64((period * 1000).rounded())
    var subscription = FakeSubscription(
      packageName: try body.string("package_name") ?? configuration.packageName,
      token: FakePlayState.newToken(), productId: productId,
      basePlanId: try body.string("base_plan_id") ?? "monthly",
      offerId: try body.string("offer_id"), state: pending ? .pending : .active,
      startTimeMillis: now,
      expiryTimeMillis: now + (trial.map { Int64(($0 * 1000).rounded()) } ?? periodMillis),
      periodMillis: periodMillis,
      test: try body.bool("test") ?? false, linkedPurchaseToken: linked,
      obfuscatedExternalAccountId: accountId, regionCode: try body.string("region_code") ?? "US",
      orderBase: state.newOrderId())
    subscription.priceUnits = priceMicros / 1_000_000
    subscription.priceNanos = Int32(priceMicros % 1_000_000) * 1000
    subscription.currency = try body.string("currency") ?? "USD"
    try state.contents.withLock { contents throws(HTTPError) in
      if let linked {
        guard var old = contents.subscriptions[linked] else { throw Self.noPurchase(linked) }
        old.state = .expired
        old.autoRenewEnabled = false
        old.cancellation = .replacement
        old.expiryTimeMillis = min(old.expiryTimeMillis, now)
        contents.subscriptions[linked] = old
      }
      contents.subscriptions[subscription.token] = subscription
      var first = Self.order(
        of: subscription, from: now, state: pending ? "PENDING" : "PROCESSED", at: now)
      if trial != nil {
        first.totalMicros = 0
        first.offerPhase = "FREE_TRIAL"
      }
      contents.orders[subscription.orderBase] = first
    }
    if !pending { notifySubscription(subscription, .purchased) }
    return FakeGoogleError.json(
      ["purchase_token": subscription.token, "order_id": subscription.latestOrderId], status: 201)
  }

  /// `POST /fake/v1/subscriptions/{token}/events` `{event, seconds?, price_micros?}`: what
  /// happens to a subscription over its life, each pushed as Google's notification type.
  /// `seconds` is the pause length for `pause`; `price_micros` is what the plan costs from this
  /// renewal on (`renew`). Each renewal (`renew`, `recover`, `resume`) charges an order of its
  /// own (`orders.get`). `revoke` is `purchases.subscriptions.revoke`: the latest order
  /// refunded (listed among the voided purchases), access ended, SUBSCRIPTION_REVOKED.
  func subscriptionEvent(_ token: String, _ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    let event = try body.requiredString("event")
    let seconds = try body.double("seconds")
    let newPrice = try body.int("price_micros")
    if let newPrice, !(0...1_000_000_000_000).contains(newPrice) {
      throw FakeControlBody.invalid("price_micros", "must be between 0 and 10^12")
    }
    let now = state.nowMillis()
    let (subscription, type) = try state.contents.withLock {
      contents throws(HTTPError) -> (FakeSubscription, SubscriptionNotificationType) in
      guard var s = contents.subscriptions[token] else { throw Self.noPurchase(token) }
      let type: SubscriptionNotificationType
      let renewalsBefore = s.renewals
      let periodStart = max(s.expiryTimeMillis, now)
      switch event {
      case "renew":
        // A renewal extends from the old expiry, or from now after a lapse.
        if let newPrice {
          s.priceUnits = newPrice / 1_000_000
          s.priceNanos = Int32(newPrice % 1_000_000) * 1000
        }
        s.expiryTimeMillis = max(s.expiryTimeMillis, now) + s.periodMillis
        s.renewals += 1
        s.state = .active
        type = .renewed
      case "grace":
        s.state = .inGracePeriod
        type = .inGracePeriod
      case "hold":
        s.state = .onHold
        s.expiryTimeMillis = min(s.expiryTimeMillis, now)
        type = .onHold
      case "recover":
        s.state = .active
        s.renewals += 1
        s.expiryTimeMillis = now + s.periodMillis
        type = .recovered
      case "pause":
        s.state = .paused
        s.expiryTimeMillis = min(s.expiryTimeMillis, now)
        s.autoResumeMillis = now + Int64(((seconds ?? Double(s.periodMillis) / 1000) * 1000))
        type = .paused
      case "resume":
        s.state = .active
        s.autoResumeMillis = nil
        s.renewals += 1
        s.expiryTimeMillis = now + s.periodMillis
        type = .renewed
      case "cancel":
        s.state = .canceled
        s.autoRenewEnabled = false
        s.cancellation = .user
        s.cancelTimeMillis = now
        type = .canceled
      case "restart":
        guard s.state == .canceled, s.expiryTimeMillis > now else {
          throw HTTPError(409, code: "not_restartable", detail: "Only a canceled, unexpired one.")
        }
        s.state = .active
        s.autoRenewEnabled = true
        s.cancellation = nil
        s.cancelTimeMillis = nil
        type = .restarted
      case "revoke":
        guard s.state != .expired, s.state != .pending, s.state != .pendingPurchaseCanceled else {
          throw HTTPError(409, code: "not_revocable", detail: "Only a live subscription.")
        }
        s.state = .expired
        s.autoRenewEnabled = false
        s.cancellation = .developer
        s.expiryTimeMillis = min(s.expiryTimeMillis, now)
        contents.orders[s.latestOrderId]?.state = "REFUNDED"
        contents.orders[s.latestOrderId]?.lastEventTimeMillis = now
        contents.voided.append(
          FakeVoided(
            packageName: s.packageName, token: s.token, orderId: s.latestOrderId,
            purchaseTimeMillis: s.startTimeMillis, voidedTimeMillis: now, source: 1, reason: 0,
            quantity: nil, isSubscription: true))
        type = .revoked
      case "expire":
        s.state = .expired
        s.autoRenewEnabled = false
        s.expiryTimeMillis = min(s.expiryTimeMillis, now)
        type = .expired
      case "complete":
        guard s.state == .pending else {
          throw HTTPError(409, code: "not_pending", detail: "The subscription is not pending.")
        }
        s.state = .active
        s.startTimeMillis = now
        s.expiryTimeMillis = now + s.periodMillis
        type = .purchased
      case "cancel_pending":
        guard s.state == .pending else {
          throw HTTPError(409, code: "not_pending", detail: "The subscription is not pending.")
        }
        s.state = .pendingPurchaseCanceled
        type = .pendingPurchaseCanceled
      default:
        throw FakeControlBody.invalid(
          "event",
          "must be renew, grace, hold, recover, pause, resume, cancel, restart, revoke, "
            + "expire, complete or cancel_pending")
      }
      if s.renewals > renewalsBefore {
        let start = event == "renew" ? periodStart : now
        contents.orders[s.latestOrderId] = Self.order(
          of: s, from: start, state: "PROCESSED", at: now)
      }
      if event == "complete" {
        contents.orders[s.orderBase]?.state = "PROCESSED"
        contents.orders[s.orderBase]?.createTimeMillis = now
      }
      contents.subscriptions[token] = s
      return (s, type)
    }
    notifySubscription(subscription, type)
    return FakeGoogleError.json(subscription.json)
  }

  /// The order that pays the subscription's latest period, from `start` to its expiry.
  static func order(of s: FakeSubscription, from start: Int64, state: String, at now: Int64)
    -> FakeOrder
  {
    FakeOrder(
      packageName: s.packageName, orderId: s.latestOrderId, token: s.token,
      productId: s.productId, createTimeMillis: now, lastEventTimeMillis: now,
      totalMicros: s.priceUnits * 1_000_000 + Int64(s.priceNanos / 1000), currency: s.currency,
      line: .subscription(
        basePlanId: s.basePlanId, startMillis: start, endMillis: s.expiryTimeMillis),
      state: state)
  }

  func notifySubscription(_ s: FakeSubscription, _ type: SubscriptionNotificationType) {
    outbox.publish(
      notification(
        [
          "subscriptionNotification": [
            "version": "1.0", "notificationType": type.rawValue, "purchaseToken": s.token,
          ] as [String: Any]
        ], package: s.packageName))
  }
}
