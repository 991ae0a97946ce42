import HTTP
import Postgres
import StorekeeperCore
import StorekeeperLogging

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
  /// The served offerings an order may name (`placement` and `offering`), where what it named
  /// is kept, and what is known of users (for rules on the user); nil: orders name none (a
  /// body that does is refused).
  var offerings: (served: ServedCatalog, shown: OrderOfferingRepository, facts: UserFactsReader)?

  package init(
    database: PostgresPool, orders: OrderRepository, idempotency: IdempotencyStore, ttlSeconds: Int,
    auth: AppAuthenticator, groupCommit: OrderGroupCommit, googlePlay: Bool = false,
    offerings: (
      served: ServedCatalog, shown: OrderOfferingRepository, facts: UserFactsReader
    )? = nil
  ) {
    self.googlePlay = googlePlay
    self.offerings = offerings
    self.database = database
    self.orders = orders
    self.idempotency = idempotency
    self.ttlSeconds = ttlSeconds
    self.auth = auth
    self.groupCommit = groupCommit
  }

  /// The largest body an order is read from. An order runs on the event loop, so its body is
  /// parsed there: a valid one is under 4 KiB even with every character escaped (`user_id`
  /// 128 characters, each a `\uXXXX\uXXXX` pair, is 1,536 bytes; the other fields are
  /// shorter), and 16 KiB leaves room for any layout. Up to the server's 1 MiB, a body of
  /// 80,000 unknown keys held the loop, and every connection on it, for 0.3 s (debug build).
  static let maxBodyBytes = 16 * 1024

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/orders", placement: .eventLoop, maxBodyBytes: Self.maxBodyBytes) {
      request, context in
      let caller = try await auth.caller(request, context)
      return try await create(request, caller: caller, context)
    }
    router.add(.get, "/v1/orders/{trade_no}", placement: .eventLoop) { request, context in
      let caller = try await auth.caller(request, context)
      let tradeNo = context.parameters["trade_no"] ?? ""
      // Another user's order is answered exactly like one that does not exist, so trade
      // numbers cannot be probed.
      guard TradeNumber.isWellFormed(tradeNo), let order = try await orders.findShowing(tradeNo),
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

  /// The body as sent; `user_id` may be left out when the token names the user. `placement`
  /// and `offering`, together or not at all, name what the order was made from. `namedStore`
  /// is the `store` the body gave (the order's store is `app_store` when it gives none).
  static func parse(_ request: Request, userRequired: Bool = true) throws -> (
    order: NewOrder, placement: String?, offering: String?, namedStore: OrderStore?
  ) {
    var fields = try RequestFields(request: request)
    fields.rejectUnknown(
      allowed: ["user_id", "product_id", "quantity", "store", "placement", "offering"])
    let userId = fields.string("user_id", required: userRequired, maxLength: 128)
    if let userId, !UserId.isValid(userId) {
      fields.fail("user_id", "must be 1-128 printable characters")
    }
    let productId = fields.string("product_id", required: true, maxLength: 100)
    // As openapi.yaml says: a malformed id is the request's fault (422), never a 404 that an
    // Idempotency-Key would keep for a day.
    if let productId, !ProductDraft.isValidProductId(productId) {
      fields.fail("product_id", "must be 1-100 of [A-Za-z0-9._-]")
    }
    let quantity = fields.integer("quantity", range: 1...10) ?? 1
    let storeText = fields.string("store", maxLength: 32)
    let store = storeText.map { OrderStore(rawValue: $0) } ?? .appStore
    if store == nil { fields.fail("store", "must be app_store or google_play") }
    let placement = fields.string("placement", maxLength: 64)
    let offering = fields.string("offering", maxLength: 64)
    for (name, id) in [("placement", placement), ("offering", offering)] {
      if let id, !OfferingDraft.isValidId(id) { fields.fail(name, "must be 1-64 of [a-z0-9_-]") }
    }
    if (placement == nil) != (offering == nil) {
      fields.fail(placement == nil ? "placement" : "offering", "placement and offering go together")
    }
    try fields.validate()
    return (
      NewOrder(
        userId: userId ?? "", productId: productId ?? "", quantity: Int32(quantity),
        store: store ?? .appStore), placement, offering, storeText == nil ? nil : store
    )
  }

  /// What the order names as shown, recorded as named: the variant is added when the
  /// placement's running experiment assigns this user the variant of that offering and no
  /// targeting rule takes the user out of it. Anything else is recorded untagged, never
  /// refused: the app may still show what it was answered before (a concluded experiment's
  /// losing variant, a rule since removed, an offering since deleted), this instance may not
  /// have loaded what another just served, and a tag for the results never stops a purchase.
  func shown(
    placement: String?, offering: String?, new order: NewOrder, namedStore: OrderStore?,
    _ request: Request, _ context: Context
  ) async throws -> OfferingShown? {
    let userId = order.userId
    guard let placement, let offering else { return nil }
    let (placed, exists) =
      offerings?.served.read {
        ($0.offerings.placements[placement], $0.offerings.offerings[offering] != nil)
      } ?? (nil, false)
    var shown = OfferingShown(placementId: placement, offeringId: offering)
    guard let placed, exists else {
      context.logger.notice(
        "an order names an offering not served here; recorded untagged",
        ["placement": .string(placement), "offering": .string(offering)])
      return shown
    }
    if let experiment = placed.experiment, experiment.status == .running,
      let variant = experiment.assign(userId), variant.offeringId == offering,
      try await !targeted(placed, order, namedStore: namedStore, request)
    {
      shown.experimentId = experiment.experimentId
      shown.variant = variant.variant
    }
    return shown
  }

  /// Whether one of the placement's rules chooses for this user, as `GET /v1/offerings` would:
  /// then the user is not in the experiment, and an order of a rule's offering that happens to
  /// be a variant's is not that variant's. The request facts are read from this request as
  /// the offerings route reads its own (parameters first, then headers; the storefront the
  /// order is priced for), with the `store` its body names first; the user's facts are read
  /// only when a rule needs them. A store named nowhere is no fact, as on the offerings route:
  /// taken as `app_store`, a store rule the offering's request did not match took an exposed
  /// user out. Judged on headers alone, an app sending `?storefront=DEU` was targeted by a
  /// German rule on the offerings route and in the experiment on its order.
  private func targeted(
    _ placement: ServedPlacement, _ order: NewOrder, namedStore: OrderStore?, _ request: Request
  ) async throws -> Bool {
    guard !placement.rules.isEmpty else { return false }
    var facts = OfferingRequest.facts(of: request, storefront: order.storefront)
    if let namedStore { facts.store = AppStoreName(rawValue: namedStore.rawValue) }
    if let decided = TargetingRule.firstIndexWithoutFacts(
      placement.rules, request: facts, hasUser: true)
    {
      return decided != nil
    }
    guard let reader = offerings?.facts else { return false }
    let rule = try await TargetingRule.firstIndex(placement.rules, request: facts) {
      try await reader.facts(order.userId)
    }
    return rule != nil
  }

  /// Keeps what the created order was made from. A failure costs only the tag (the order
  /// stands, and is attributed by the window rule), so it is logged, not answered.
  func keep(_ shown: OfferingShown?, of order: Order, _ context: Context) async {
    guard let shown, let repository = offerings?.shown else { return }
    do {
      try await repository.record(shown, tradeNo: order.tradeNo)
    } catch {
      context.logger.warning(
        "the offering an order was made from could not be recorded",
        [
          "trade_no": .string(LogRedaction.tradeNumber(order.tradeNo)),
          "error": .string(String(describing: error)),
        ])
    }
  }

  func create(_ request: Request, caller: Caller, _ context: Context) async throws -> Response {
    let parsed = try Self.parse(request, userRequired: caller.confinedTo == nil)
    var new = parsed.order
    new.userId = try auth.user(caller, named: new.userId.isEmpty ? nil : new.userId) ?? ""
    if new.store == .googlePlay, !googlePlay { throw GooglePlayOff().problem }
    // Priced where the app is, as its catalog read showed (the same parameter and header).
    new.storefront = try StorefrontRequest.storefront(request)
    let shown = try await shown(
      placement: parsed.placement, offering: parsed.offering, new: new,
      namedStore: parsed.namedStore, request, context)
    new.shown = shown
    guard let key = request.headers["Idempotency-Key"] else {
      let order = try await orderOrProblem { try await groupCommit.commit(.init(order: new)) }
      await keep(shown, of: order, context)
      return Self.created(order)
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
      + (shown.map { "\noffering \($0.placementId) \($0.offeringId)" } ?? "")
      + (new.storefront.map { "\nstorefront \($0)" } ?? "")
    switch try await idempotency.claim(userId: new.userId, key: key, fingerprint: fingerprint) {
    case .replay(let status, let body):
      var headers = HTTPHeaders()
      headers.add("Content-Type", status >= 400 ? "application/problem+json" : "application/json")
      headers.add("Idempotent-Replayed", "true")
      // The replayed 201 names its order where the first one did.
      if status == OrderGroupCommit.createdStatus,
        case .object(let fields)? = try? JSONParser.parse(body, maxDepth: 16),
        case .string(let tradeNo)? = fields["trade_no"]
      {
        headers.add("Location", "/v1/orders/\(tradeNo)")
      }
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
    case .claimed(let token):
      do {
        // The order and its key's answer are committed together (see `OrderGroupCommit`).
        let order = try await orderOrProblem {
          try await groupCommit.commit(.init(order: new, key: key, token: token))
        }
        await keep(shown, of: order, context)
        return Self.created(order)
      } catch let error as HTTPError where error.status < 500 && error.code != Self.slotsFull {
        // A definite answer (unknown product…) is remembered like a success. The open-order
        // limit is not definite: once an order is paid, cancelled or expires the same request
        // succeeds, so that key is released like a failure, not kept refusing for its lifetime.
        // Its request id is the request that made it: a replay answers with that answer.
        let body = error.response(requestId: context.requestId).body
        _ = try? await idempotency.complete(
          userId: new.userId, key: key, status: error.status, body: body, token: token,
          on: database)
        throw error
      } catch {
        await idempotency.release(userId: new.userId, key: key, token: token)
        throw error
      }
    }
  }

  /// The answer to a created order: 201 with its `Location`.
  /// The refusal of a user at the open-order limit (`OrderRefusal.tooManyOpenOrders`).
  static let slotsFull = "too_many_open_orders"

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
    } catch is IdempotencyKeyTakenOver {
      throw HTTPError(
        409, code: "idempotency_key_in_flight",
        detail:
          "this request ran so long that another with its Idempotency-Key took the key over; retry for that one's answer",
        headers: HTTPHeaders([("Retry-After", "1")]))
    } catch is CancellationError {
      // Its client closed the connection while the order waited for a batch: withdrawn, never
      // written. Nobody reads this answer; it is what waiting longer would have come to, and
      // the access log shows it (a bare 500 would log an error for every client that left).
      throw HTTPError(
        503, code: "database_unavailable", detail: "the order was not made; retry shortly",
        headers: HTTPHeaders([("Retry-After", "2")]))
    }
  }
}
