import HTTP
import Postgres
import StorekeeperCore

/// `/v1/orders`: create an order before the purchase (validation, idempotency, creation), read
/// it after.
package struct OrderRoutes: Sendable {
  let database: PostgresPool
  let orders: OrderRepository
  let idempotency: IdempotencyStore
  let ttlSeconds: Int
  let auth: AppAuthenticator
  /// Writes the orders of concurrent requests together (see `OrderGroupCommit`).
  let groupCommit: OrderGroupCommit
  /// Whether orders may be for Google Play (`GOOGLE_PLAY_PACKAGE_NAME` set).
  var googlePlay = false

  package init(
    database: PostgresPool, orders: OrderRepository, idempotency: IdempotencyStore, ttlSeconds: Int,
    auth: AppAuthenticator, groupCommit: OrderGroupCommit, googlePlay: Bool = false
  ) {
    self.googlePlay = googlePlay
    self.database = database
    self.orders = orders
    self.idempotency = idempotency
    self.ttlSeconds = ttlSeconds
    self.auth = auth
    self.groupCommit = groupCommit
  }

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/orders", placement: .eventLoop) { request, context in
      let caller = try await auth.caller(request, context)
      return try await create(request, caller: caller)
    }
    router.add(.get, "/v1/orders/{trade_no}", placement: .eventLoop) { request, context in
      let caller = try await auth.caller(request, context)
      let tradeNo = context.parameters["trade_no"] ?? ""
      // Another user's order is answered exactly like one that does not exist, so trade
      // numbers cannot be probed.
      guard TradeNumber.isWellFormed(tradeNo), let order = try await orders.find(tradeNo),
        UserId.may(caller.confinedTo, actFor: order.userId)
      else {
        throw SettlementRefusal.orderNotFound(tradeNo: tradeNo).problem
      }
      return Self.response(order)
    }
  }

  /// The order as a JSON response, written by `Order.json`.
  static func response(_ order: Order, status: Int = 200, headers: HTTPHeaders = .init())
    -> Response
  {
    var response = Response(status: status, headers: headers, body: order.json)
    response.headers.replaceOrAdd("Content-Type", "application/json")
    return response
  }

  /// The body as sent; `user_id` may be left out when the token names the user.
  static func parse(_ request: Request, userRequired: Bool = true) throws -> NewOrder {
    var fields = try RequestFields(request: request)
    fields.rejectUnknown(allowed: ["user_id", "product_id", "quantity", "store"])
    let userId = fields.string("user_id", required: userRequired, maxLength: 128)
    if let userId, !UserId.isValid(userId) {
      fields.fail("user_id", "must be 1-128 printable characters")
    }
    let productId = fields.string("product_id", required: true, maxLength: 100)
    let quantity = fields.integer("quantity", range: 1...10) ?? 1
    let storeText = fields.string("store", maxLength: 32)
    let store = storeText.map { OrderStore(rawValue: $0) } ?? .appStore
    if store == nil { fields.fail("store", "must be app_store or google_play") }
    try fields.validate()
    return NewOrder(
      userId: userId ?? "", productId: productId ?? "", quantity: Int32(quantity),
      store: store ?? .appStore)
  }

  func create(_ request: Request, caller: Caller) async throws -> Response {
    var new = try Self.parse(request, userRequired: caller.confinedTo == nil)
    new.userId = try auth.user(caller, named: new.userId.isEmpty ? nil : new.userId) ?? ""
    if new.store == .googlePlay, !googlePlay { throw GooglePlayOff().problem }
    guard let key = request.headers["Idempotency-Key"] else {
      return try Self.created(
        await orderOrProblem { try await groupCommit.commit(.init(order: new)) })
    }
    guard IdempotencyStore.isValidKey(key) else {
      throw HTTPError(
        400, code: "invalid_idempotency_key",
        detail: "Idempotency-Key must be 1-255 visible ASCII characters")
    }
    // An App Store order's fingerprint is as it always was, so keys stored before stay valid.
    let fingerprint =
      "\(new.userId)\n\(new.productId)\n\(new.quantity)"
      + (new.store == .appStore ? "" : "\n\(new.store.rawValue)")
    switch try await idempotency.claim(userId: new.userId, key: key, fingerprint: fingerprint) {
    case .replay(let status, let body):
      var headers = HTTPHeaders()
      headers.add("Content-Type", status >= 400 ? "application/problem+json" : "application/json")
      headers.add("Idempotent-Replayed", "true")
      return Response(status: status, headers: headers, body: body)
    case .inFlight:
      throw HTTPError(
        409, code: "idempotency_key_in_flight",
        detail: "a request with this Idempotency-Key is still being processed; retry shortly",
        headers: HTTPHeaders([("Retry-After", "1")]))
    case .mismatch:
      throw HTTPError(
        422, code: "idempotency_key_reused",
        detail: "this Idempotency-Key was used with a different request body")
    case .claimed:
      do {
        // The order and its key's answer are committed together (see `OrderGroupCommit`).
        return try Self.created(
          await orderOrProblem { try await groupCommit.commit(.init(order: new, key: key)) })
      } catch let error as HTTPError where error.status < 500 {
        // A definite answer (unknown product…) is remembered like a success.
        let body = error.response(requestId: "").body
        try? await idempotency.complete(
          userId: new.userId, key: key, status: error.status, body: body, on: database)
        throw error
      } catch {
        await idempotency.release(userId: new.userId, key: key)
        throw error
      }
    }
  }

  /// The answer to a created order: 201 with its `Location`.
  static func created(_ order: Order) -> Response {
    Self.response(
      order, status: OrderGroupCommit.createdStatus,
      headers: HTTPHeaders([("Location", "/v1/orders/\(order.tradeNo)")]))
  }

  /// The created order, or the refusal as its problem answer.
  private func orderOrProblem(_ create: () async throws -> Order) async throws -> Order {
    do {
      return try await create()
    } catch let refusal as OrderRefusal {
      throw refusal.problem
    }
  }
}
