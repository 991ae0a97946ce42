import HTTP
import StorekeeperCore

/// `/v1/users/{user_id}/balances/{currency}/spend`, `…/grant` and `/v1/users/{user_id}/ledger`:
/// the game spends from a balance (a signed-in user for themselves, the backend for anyone),
/// the backend grants rewards (a signed-in user may not: 403), and a user reads their own
/// history.
package struct WalletRoutes: Sendable {
  let wallet: WalletService
  let auth: AppAuthenticator

  package init(wallet: WalletService, auth: AppAuthenticator) {
    self.wallet = wallet
    self.auth = auth
  }

  package func register(_ router: inout APIRouter) {
    // Both count per user (`RateLimitRules`); past that limit, an exact replay of an operation
    // already made is still answered (`replay`), as it would have been within it.
    router.add(
      .post, "/v1/users/{user_id}/balances/{currency}/spend",
      replay: { request, context in try await replay(.spend, request, context) }
    ) { request, context in
      try await operate(.spend, request, context)
    }
    router.add(
      .post, "/v1/users/{user_id}/balances/{currency}/grant",
      replay: { request, context in try await replay(.grant, request, context) }
    ) { request, context in
      try await operate(.grant, request, context)
    }
    router.add(.get, "/v1/users/{user_id}/ledger") { request, context in
      let caller = try await auth.caller(request, context)
      let userId = try auth.user(caller, named: try Self.userId(context)) ?? ""
      var problems: [FieldError] = []
      let page = PageRequest(numeric: request.query, known: [], problems: &problems)
      try PageRequest.check(problems)
      let split = try await wallet.ledger(userId: userId, before: page.before, limit: page.limit)
      let debts = try await wallet.debts(userId: userId)
      return try JSONCoding.response(
        LedgerPage(entries: split.items, nextCursor: split.next, debts: debts))
    }
  }

  private func operate(_ kind: WalletRequest.Kind, _ request: Request, _ context: Context)
    async throws -> Response
  {
    let operation = try await walletRequest(kind, request, context)
    let userId = operation.userId
    let asset = operation.asset
    let outcome: WalletService.Outcome
    do {
      outcome = try await wallet.apply(operation)
    } catch WalletRefusal.insufficientBalance(let balance) {
      context.logger.info(
        "spend refused",
        [
          "user_id": .string(userId), "asset": .string(asset),
          "amount": .int(Int(operation.amount)), "balance": .int(Int(balance)),
        ])
      throw WalletRefusal.insufficientBalance(balance: balance)
    }
    if outcome.created {
      context.logger.info(
        kind == .spend ? "balance spent" : "balance granted",
        [
          "user_id": .string(userId), "asset": .string(asset),
          "amount": .int(Int(operation.amount)),
          "operation_id": .int(Int(outcome.operation.id)), "caller": .string(operation.caller),
        ])
    }
    return try Self.response(outcome)
  }

  /// The answer an operation already made with this request's key and body gave, or nil (a new
  /// operation, or a key used with another body).
  private func replay(_ kind: WalletRequest.Kind, _ request: Request, _ context: Context)
    async throws -> Response?
  {
    let operation = try await walletRequest(kind, request, context)
    return try await wallet.replay(operation).map(Self.response)
  }

  static func response(_ outcome: WalletService.Outcome) throws -> Response {
    var response = try JSONCoding.response(outcome.operation, status: outcome.created ? 201 : 200)
    if !outcome.created { response.headers.add("Idempotent-Replayed", "true") }
    return response
  }

  /// The request as the wallet takes it: its caller may act for the path's user, and its key
  /// and body are valid (else the problem that says why).
  private func walletRequest(
    _ kind: WalletRequest.Kind, _ request: Request, _ context: Context
  ) async throws -> WalletRequest {
    let caller = try await auth.caller(request, context)
    let userId = try auth.user(caller, named: try Self.userId(context)) ?? ""
    if kind == .grant, caller.confinedTo != nil {
      throw HTTPError(
        403, code: "backend_only",
        detail: "only the app's backend may grant balances; a signed-in user may spend")
    }
    let asset = context.parameters["currency"] ?? ""
    guard AdjustmentRequest.isValidAsset(asset) else {
      throw HTTPError(
        404, code: "balance_not_found",
        detail: "a balance is named by 1-64 letters, digits, '_', '-' or '.'")
    }
    guard let key = request.headers["Idempotency-Key"] else {
      throw HTTPError(
        400, code: "idempotency_key_required",
        detail: "send an Idempotency-Key header: a retried \(kind.rawValue) must not count twice")
    }
    guard IdempotencyStore.isValidKey(key) else {
      throw HTTPError(
        400, code: "invalid_idempotency_key",
        detail: "Idempotency-Key must be 1-255 visible ASCII characters")
    }
    let parsed = try Self.body(kind, request)
    return WalletRequest(
      kind: kind, userId: userId, asset: asset, amount: parsed.amount, reason: parsed.reason,
      reference: parsed.reference, environment: parsed.environment, idempotencyKey: key,
      caller: Self.name(caller), requestId: context.requestId)
  }

  /// The body, every wrong field named at once (422).
  static func body(_ kind: WalletRequest.Kind, _ request: Request) throws
    -> (amount: Int64, reason: String, reference: String?, environment: String?)
  {
    var fields = try RequestFields(request: request)
    fields.rejectUnknown(
      allowed: kind == .grant
        ? ["amount", "reason", "reference", "environment"] : ["amount", "reason", "reference"])
    let amount = fields.integer("amount", required: true, range: 1...WalletRequest.maxAmount)
    let reason = fields.string("reason", required: true, maxLength: WalletRequest.maxReasonLength)
    if let reason, reason.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
      fields.fail("reason", "must say why (at least one non-blank character)")
    }
    let reference = fields.string("reference", maxLength: WalletRequest.maxReferenceLength)
    var environment: String?
    if kind == .grant {
      environment = fields.string("environment", maxLength: 16) ?? "Production"
      if let value = environment, !["Production", "Sandbox"].contains(value) {
        fields.fail("environment", "must be Production or Sandbox")
      }
    }
    try fields.validate()
    guard let amount, let reason else { throw HTTPError(422, code: "validation_failed") }
    return (amount, reason, reference, environment)
  }

  static func userId(_ context: Context) throws -> String {
    let id = context.parameters["user_id"] ?? ""
    guard UserId.isValid(id) else {
      throw HTTPError(
        400, code: "invalid_user_id", detail: "user_id must be 1-128 printable characters")
    }
    return id
  }

  /// Who asked, as the operation's row records it.
  static func name(_ caller: Caller) -> String {
    switch caller {
    case .user(let id): "user:\(id)"
    case .backend(let name): "backend:\(name)"
    case .anyone: "anyone"
    case .anonymous: "anonymous"
    }
  }
}
