import Foundation
import GooglePlay
import HTTP

extension FakeGooglePlayEndpoints {
  /// The control endpoints tests drive the fake with (snake_case JSON, problem+json refusals).
  func registerControls(_ router: inout Router) {
    router.add(.post, "/fake/v1/products") { [self] request, _ in try makeProduct(request) }
    router.add(.post, "/fake/v1/products/{token}/complete") { [self] _, context in
      try settlePending(context.parameters["token"] ?? "", to: .purchased)
    }
    router.add(.post, "/fake/v1/products/{token}/cancel") { [self] _, context in
      try settlePending(context.parameters["token"] ?? "", to: .canceled)
    }
    router.add(.post, "/fake/v1/subscriptions") { [self] request, _ in
      try makeSubscription(request)
    }
    router.add(.post, "/fake/v1/subscriptions/{token}/events") { [self] request, context in
      try subscriptionEvent(context.parameters["token"] ?? "", request)
    }
    router.add(.post, "/fake/v1/voids") { [self] request, _ in try void(request) }
    router.add(.get, "/fake/v1/clock") { [self] _, _ in clockResponse() }
    router.add(.post, "/fake/v1/clock") { [self] request, _ in try setClock(request) }
    router.add(.post, "/fake/v1/clock/advance") { [self] request, _ in try advanceClock(request) }
    router.add(.post, "/fake/v1/three-day-rule") { [self] _, _ in runThreeDayRule() }
    router.add(.post, "/fake/v1/faults") { [self] request, _ in try setFault(request) }
    router.add(.post, "/fake/v1/notifications/test") { [self] _, _ in
      let id = outbox.publish(notification(["testNotification": ["version": "1.0"]]))
      return FakeGoogleError.json(["message_id": id])
    }
    registerPushControls(&router)
  }

  /// `POST /fake/v1/products` `{product_id, state?: purchased|pending, test?, quantity?,
  /// obfuscated_account_id?, region_code?, price_micros?, currency?}`: a one-time purchase,
  /// pushed as ONE_TIME_PRODUCT_PURCHASED unless pending. Its order (`orders.get`) charges
  /// `price_micros` (0.99 unless named) per unit.
  func makeProduct(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    let productId = try body.requiredString("product_id")
    let stateName = try body.string("state") ?? "purchased"
    guard stateName == "purchased" || stateName == "pending" else {
      throw FakeControlBody.invalid("state", "must be purchased or pending")
    }
    let quantity = try body.int("quantity") ?? 1
    guard (1...100).contains(quantity) else {
      throw FakeControlBody.invalid("quantity", "must be 1 to 100")
    }
    let accountId = try body.string("obfuscated_account_id")
    if let accountId, accountId.count > 64 {
      throw FakeControlBody.invalid("obfuscated_account_id", "must be at most 64 characters")
    }
    let unitMicros = try body.int("price_micros") ?? 990_000
    guard (0...1_000_000_000_000).contains(unitMicros) else {
      throw FakeControlBody.invalid("price_micros", "must be between 0 and 10^12")
    }
    let currency = try body.string("currency") ?? "USD"
    // Google: orderId "may not be set if there is no order associated with the purchase"
    // (a promo code redeemed): no orderId, and nothing for orders.get to find.
    let orderless = try body.bool("no_order") ?? false
    let now = state.nowMillis()
    let pending = stateName == "pending"
    let product = FakeProduct(
      packageName: try body.string("package_name") ?? configuration.packageName,
      productId: productId, token: FakePlayState.newToken(),
      orderId: orderless ? "" : state.newOrderId(),
      state: pending ? .pending : .purchased, purchaseTimeMillis: now,
      purchasedAtMillis: pending ? nil : now, test: try body.bool("test") ?? false,
      quantity: Int32(quantity), refundableQuantity: Int32(quantity),
      obfuscatedExternalAccountId: accountId, regionCode: try body.string("region_code") ?? "US")
    let order = FakeOrder(
      packageName: product.packageName, orderId: product.orderId, token: product.token,
      productId: productId, createTimeMillis: now, lastEventTimeMillis: now,
      totalMicros: unitMicros * quantity, currency: currency,
      line: .oneTime(quantity: Int32(quantity)), state: pending ? "PENDING" : "PROCESSED")
    state.contents.withLock {
      $0.products[product.token] = product
      if !orderless { $0.orders[order.orderId] = order }
    }
    if !pending { notifyProduct(product, type: .purchased) }
    return FakeGoogleError.json(
      ["purchase_token": product.token, "order_id": product.orderId], status: 201)
  }

  /// A pending purchase paid (ONE_TIME_PRODUCT_PURCHASED) or abandoned (…_CANCELED).
  func settlePending(_ token: String, to target: FakeProduct.State) throws -> Response {
    let now = state.nowMillis()
    let product = try state.contents.withLock { contents throws(HTTPError) -> FakeProduct in
      guard var product = contents.products[token] else { throw Self.noPurchase(token) }
      guard product.state == .pending else {
        throw HTTPError(409, code: "not_pending", detail: "The purchase is not pending.")
      }
      product.state = target
      if target == .purchased { product.purchasedAtMillis = now }
      contents.products[token] = product
      contents.orders[product.orderId]?.state = target == .purchased ? "PROCESSED" : "CANCELED"
      contents.orders[product.orderId]?.lastEventTimeMillis = now
      return product
    }
    notifyProduct(product, type: target == .purchased ? .purchased : .canceled)
    return FakeGoogleError.json(product.json)
  }

  /// `POST /fake/v1/voids` `{purchase_token, reason?, source?, quantity?, order_id?}`: a refund
  /// or chargeback of one order, as Google refunds: a one-time purchase's (`quantity` of it for
  /// a quantity-based partial refund), or a subscription's latest order, which revokes and
  /// expires it, or an earlier order of it (`order_id`), which it survives. Listed among the
  /// voided purchases and pushed as a voidedPurchaseNotification.
  func void(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    let token = try body.requiredString("purchase_token")
    let reason = try body.int("reason") ?? 0
    guard (0...8).contains(reason) else {
      throw FakeControlBody.invalid("reason", "must be 0 to 8")
    }
    let source = try body.int("source") ?? 0
    guard (0...2).contains(source) else {
      throw FakeControlBody.invalid("source", "must be 0 to 2")
    }
    let quantity = try body.int("quantity")
    if let quantity, !(1...100).contains(quantity) {
      throw FakeControlBody.invalid("quantity", "must be 1 to 100")
    }
    let orderId = try body.string("order_id")
    if let orderId,
      state.contents.withLock({
        $0.orders[orderId]?.token != token || $0.orders[orderId]?.state == "REFUNDED"
      })
    {
      throw FakeControlBody.invalid("order_id", "must name an unrefunded order of the purchase")
    }
    guard
      let entry = voidPurchase(
        token, reason: Int32(reason), source: Int32(source), quantity: quantity.map { Int32($0) },
        orderId: orderId)
    else { throw Self.noPurchase(token) }
    return FakeGoogleError.json(entry.json)
  }

  /// Voids a purchase and pushes the notification; nil when the token is unknown.
  @discardableResult
  func voidPurchase(
    _ token: String, reason: Int32, source: Int32, quantity: Int32?, orderId: String? = nil,
    notify: Bool = true
  ) -> FakeVoided? {
    let now = state.nowMillis()
    let entry = state.contents.withLock { contents -> FakeVoided? in
      if var product = contents.products[token] {
        let partial = quantity.map { $0 < product.refundableQuantity } ?? false
        product.refundableQuantity -=
          quantity.map { min($0, product.refundableQuantity) }
          ?? product.refundableQuantity
        if !partial { product.state = .canceled }
        contents.products[token] = product
        contents.orders[product.orderId]?.state = partial ? "PARTIALLY_REFUNDED" : "REFUNDED"
        contents.orders[product.orderId]?.lastEventTimeMillis = now
        let entry = FakeVoided(
          packageName: product.packageName, token: token, orderId: product.orderId,
          purchaseTimeMillis: product.purchaseTimeMillis, voidedTimeMillis: now, source: source,
          reason: reason, quantity: partial ? quantity : nil, isSubscription: false)
        contents.voided.append(entry)
        return entry
      }
      guard var subscription = contents.subscriptions[token] else { return nil }
      let refunded = orderId ?? subscription.latestOrderId
      contents.orders[refunded]?.state = "REFUNDED"
      contents.orders[refunded]?.lastEventTimeMillis = now
      if refunded != subscription.latestOrderId {
        // An earlier period refunded: the subscription goes on.
        let entry = FakeVoided(
          packageName: subscription.packageName, token: token, orderId: refunded,
          purchaseTimeMillis: subscription.startTimeMillis, voidedTimeMillis: now,
          source: source, reason: reason, quantity: nil, isSubscription: true)
        contents.voided.append(entry)
        return entry
      }
      subscription.state = .expired
      subscription.autoRenewEnabled = false
      subscription.expiryTimeMillis = min(subscription.expiryTimeMillis, now)
      contents.subscriptions[token] = subscription
      let entry = FakeVoided(
        packageName: subscription.packageName, token: token, orderId: subscription.latestOrderId,
        purchaseTimeMillis: subscription.startTimeMillis, voidedTimeMillis: now, source: source,
        reason: reason, quantity: nil, isSubscription: true)
      contents.voided.append(entry)
      return entry
    }
    guard let entry else { return nil }
    if !notify { return entry }
    outbox.publish(
      notification([
        "voidedPurchaseNotification": [
          "purchaseToken": token, "orderId": entry.orderId,
          "productType": entry.isSubscription ? 1 : 2,
          "refundType": entry.quantity == nil ? 1 : 2,
        ] as [String: Any]
      ]))
    return entry
  }

  /// `POST /fake/v1/three-day-rule`: what Google does to purchases left unacknowledged for
  /// three days on the fake's clock — refunds and revokes them (voided reason 8).
  func runThreeDayRule() -> Response {
    let deadline = state.nowMillis() - 3 * 86_400_000
    let tokens = state.contents.withLock { contents in
      contents.products.values.filter {
        $0.state == .purchased && !$0.acknowledged && ($0.purchasedAtMillis ?? .max) <= deadline
      }.map(\.token)
        + contents.subscriptions.values.filter {
          !$0.acknowledged && $0.state != .pending && $0.state != .expired
            && $0.state != .pendingPurchaseCanceled && $0.startTimeMillis <= deadline
        }.map(\.token)
    }
    for token in tokens {
      voidPurchase(token, reason: 8, source: 2, quantity: nil)
    }
    return FakeGoogleError.json(["refunded": tokens.sorted()])
  }

  func clockResponse() -> Response {
    FakeGoogleError.json([
      "now_ms": state.nowMillis(), "offset_ms": state.contents.withLock { $0.clockOffsetMillis },
    ])
  }

  /// `POST /fake/v1/clock` `{now_ms}`: the purchase clock reads `now_ms` from now on.
  func setClock(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    guard let now = try body.int("now_ms"), now > 0 else {
      throw FakeControlBody.invalid("now_ms", "is required and positive")
    }
    let offset = now - FakePlayState.realMillis()
    state.contents.withLock { $0.clockOffsetMillis = offset }
    return clockResponse()
  }

  /// `POST /fake/v1/clock/advance` `{seconds}`.
  func advanceClock(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    guard let seconds = try body.double("seconds"), seconds >= 0 else {
      throw FakeControlBody.invalid("seconds", "is required and not negative")
    }
    state.contents.withLock { $0.clockOffsetMillis += Int64((seconds * 1000).rounded()) }
    return clockResponse()
  }

  /// `POST /fake/v1/faults`
  /// `{status, count?, retry_after?, delay_ms?, target?: api|token|orders|subscriptions}`:
  /// the next requests fail so (status 0: only delayed). `{"clear": true}` removes them all.
  func setFault(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    if try body.bool("clear") == true {
      state.contents.withLock { $0.faults = [] }
      return FakeGoogleError.json(["faults": 0])
    }
    guard let status = try body.int("status"), status == 0 || (400...599).contains(status) else {
      throw FakeControlBody.invalid("status", "must be 0 or 400 to 599")
    }
    let targetName = try body.string("target") ?? "api"
    guard let target = FakeFault.Target(rawValue: targetName) else {
      throw FakeControlBody.invalid("target", "must be api, token, orders, subscriptions or writes")
    }
    let count = try body.int("count")
    if let count, count < 1 { throw FakeControlBody.invalid("count", "must be at least 1") }
    let delay = try body.int("delay_ms") ?? 0
    guard (0...60_000).contains(delay) else {
      throw FakeControlBody.invalid("delay_ms", "must be 0 to 60000")
    }
    let fault = FakeFault(
      target: target, status: Int(status), remaining: count.map { Int($0) },
      retryAfterSeconds: try body.int("retry_after").map { Int($0) }, delayMillis: Int(delay))
    let total = state.contents.withLock { contents -> Int in
      contents.faults.append(fault)
      return contents.faults.count
    }
    return FakeGoogleError.json(["faults": total])
  }

  /// A developer notification of the configured package, now on the fake's clock.
  func notification(_ content: [String: Any], package: String? = nil) -> [String: Any] {
    content.merging([
      "version": "1.0", "packageName": package ?? configuration.packageName,
      "eventTimeMillis": String(state.nowMillis()),
    ]) { a, _ in a }
  }

  func notifyProduct(_ product: FakeProduct, type: OneTimeProductNotificationType) {
    outbox.publish(
      notification(
        [
          "oneTimeProductNotification": [
            "version": "1.0", "notificationType": type.rawValue,
            "purchaseToken": product.token, "sku": product.productId,
          ] as [String: Any]
        ], package: product.packageName))
  }

  static func noPurchase(_ token: String) -> HTTPError {
    HTTPError(
      404, code: "purchase_not_found", detail: "No purchase \(token.prefix(80)) in this fake.")
  }
}
