import HTTP
import StorekeeperCore
import StorekeeperLogging

/// `/admin/v1/users/{user_id}…`: what support needs to answer "I paid but got nothing": what
/// the user owns, the ledger rows and Apple transactions behind it, and manual adjustments.
package struct AdminUserRoutes: Sendable {
  let auth: AdminAuthenticator
  let entitlements: EntitlementRepository
  let adjustments: ManualAdjustments
  let history: UserHistory

  package init(
    auth: AdminAuthenticator, entitlements: EntitlementRepository, adjustments: ManualAdjustments,
    history: UserHistory
  ) {
    self.auth = auth
    self.entitlements = entitlements
    self.adjustments = adjustments
    self.history = history
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/users/{user_id}") { request, context in
      _ = try auth.authenticate(request, context)
      let userId = try Self.userId(context)
      return try JSONCoding.response(try await entitlements.view(userId: userId))
    }
    router.add(.get, "/admin/v1/users/{user_id}/ledger") { request, context in
      _ = try auth.authenticate(request, context)
      let userId = try Self.userId(context)
      let page = try Self.numericPage(request.query)
      let split = try await history.ledger(
        userId: userId, before: page.before, limit: page.limit)
      let debts = try await history.debts(userId: userId)
      return try JSONCoding.response(
        LedgerPage(entries: split.items, nextCursor: split.next, debts: debts))
    }
    router.add(.get, "/admin/v1/users/{user_id}/transactions") { request, context in
      _ = try auth.authenticate(request, context)
      let userId = try Self.userId(context)
      var problems: [FieldError] = []
      let page = PageRequest(
        request.query, known: [], problems: &problems,
        cursorRule: "must be a transaction id (1-64 printable characters)",
        isKey: Self.isTransactionId)
      try PageRequest.check(problems)
      let split = try await history.transactions(
        userId: userId, after: page.after, limit: page.limit)
      return try JSONCoding.response(ListPage("transactions", split.items, next: split.next))
    }
    router.add(.get, "/admin/v1/users/{user_id}/adjustments") { request, context in
      _ = try auth.authenticate(request, context)
      let userId = try Self.userId(context)
      let page = try Self.numericPage(request.query)
      let split = try await adjustments.list(
        userId: userId, limit: page.limit, before: page.before)
      return try JSONCoding.response(ListPage("adjustments", split.items, next: split.next))
    }
    router.add(.post, "/admin/v1/users/{user_id}/adjustments") { request, context in
      let actor = try auth.authenticate(request, context)
      let userId = try Self.userId(context)
      let adjustment = try Self.adjustment(
        userId: userId, request: request, idempotencyKey: request.headers["Idempotency-Key"])
      let outcome = try await adjustments.applyAdjustment(adjustment, by: actor)
      if outcome.created {
        context.logger.notice(
          "balance adjusted",
          [
            "admin": .string(actor.name), "adjustment_id": .int(Int(outcome.adjustment.id)),
            "asset": .string(adjustment.asset), "amount": .int(Int(adjustment.amount)),
          ])
      }
      struct Answer: Encodable {
        var adjustment: LedgerAdjustment
        var balance: Int64
      }
      return try JSONCoding.response(
        Answer(adjustment: outcome.adjustment, balance: outcome.balance),
        status: outcome.created ? 201 : 200)
    }
  }

  /// The path's user: one no user can have is 400, as the app's own entitlements route says.
  static func userId(_ context: Context) throws -> String {
    let id = context.parameters["user_id"] ?? ""
    guard UserId.isValid(id) else {
      throw HTTPError(
        400, code: "invalid_user_id", detail: "user_id must be 1-128 printable characters")
    }
    return id
  }

  static func numericPage(_ query: [String: String]) throws -> PageRequest {
    var problems: [FieldError] = []
    let page = PageRequest(numeric: query, known: [], problems: &problems)
    try PageRequest.check(problems)
    return page
  }

  static func isTransactionId(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 64
      && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
  }

  /// The body of an adjustment, every wrong field named at once (422).
  static func adjustment(userId: String, request: Request, idempotencyKey: String?) throws
    -> AdjustmentRequest
  {
    // As POST /v1/orders spells it: 1-255 visible ASCII characters.
    if let key = idempotencyKey,
      key.isEmpty || key.utf8.count > 255 || !key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
    {
      throw HTTPError(
        400, code: "invalid_idempotency_key",
        detail: "Idempotency-Key must be 1-255 visible ASCII characters")
    }
    var fields = try RequestFields(request: request)
    fields.rejectUnknown(allowed: ["asset", "amount", "reason", "environment"])
    let asset = fields.string("asset", required: true, maxLength: 64)
    if let asset, !AdjustmentRequest.isValidAsset(asset) {
      fields.fail("asset", "must be 1-64 letters, digits, '_', '-' or '.'")
    }
    let limit = AdjustmentRequest.maxAmount
    let amount = fields.integer("amount", required: true, range: -limit...limit)
    if amount == 0 { fields.fail("amount", "must not be 0") }
    let reason = fields.string("reason", required: true, maxLength: 500)
    // Unicode's White_Space, the class openapi.yaml's pattern spells out.
    if let reason, reason.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
      fields.fail("reason", "must say why (at least one non-blank character)")
    }
    let environment = fields.string("environment", maxLength: 16) ?? "Production"
    if !["Production", "Sandbox"].contains(environment) {
      fields.fail("environment", "must be Production or Sandbox")
    }
    try fields.validate()
    guard let asset, let amount, let reason else {
      throw HTTPError(422, code: "validation_failed")
    }
    return AdjustmentRequest(
      userId: userId, asset: asset, amount: amount, environment: environment, reason: reason,
      idempotencyKey: idempotencyKey)
  }
}
