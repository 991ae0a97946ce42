import Digest
import HTTP
import StorekeeperCore
import StorekeeperLogging

/// Admin bearer tokens (`ADMIN_TOKENS`, see `AdminToken`). Every comparison runs over every
/// token and every byte, so the time taken says nothing about how close a guess was; a token
/// configured as its SHA-256 is compared digest to digest. Failures are logged (address, path,
/// reason; never what was presented) and wrong tokens are rate limited per client address.
package struct AdminAuthenticator: Sendable {
  let tokens: [AdminToken]
  /// `METRICS_TOKEN`: reads `/metrics`, nothing else.
  let metricsToken: AdminToken?
  let limiter: AdminFailureLimiter
  /// Where a request came from (`TRUSTED_PROXIES`), as the rate limits see it too.
  let addresses: ClientAddress

  package init(
    tokens: [AdminToken], metricsToken: AdminToken? = nil, limiter: AdminFailureLimiter,
    addresses: ClientAddress = ClientAddress()
  ) {
    self.tokens = tokens
    self.metricsToken = metricsToken
    self.limiter = limiter
    self.addresses = addresses
  }

  /// The address a request came from, without the peer's port (each connection has its own,
  /// and failures are counted per address); behind a trusted proxy, the client it names.
  func clientAddress(_ request: Request, _ context: Context) -> String {
    addresses.resolve(
      peer: context.remoteAddress, forwardedFor: request.headers.values("X-Forwarded-For"))
  }

  /// `authenticate(_:_:scope:)` with the scope the request's method needs: looking (GET,
  /// HEAD) needs read, anything else write, so no admin route can forget to ask.
  func authenticate(_ request: Request, _ context: Context) throws -> AdminActor {
    try authenticate(request, context, scope: .needed(for: request.method))
  }

  /// Returns who is asking, or throws 429 (a wrong token from an address refused), 401 (no or
  /// wrong token) or 403 (`insufficient_scope`: the token may not do what the route needs).
  ///
  /// The failure limit refuses wrong tokens only: a right one is served even from an address
  /// refused for wrong ones, so whoever shares the admin's address (a NAT, a proxy when
  /// `TRUSTED_PROXIES` is unset) cannot lock the admin out. The token is compared first, in
  /// constant time, whether the address is refused or not; a refused address learns nothing a
  /// 401 would not tell (its guess is wrong either way), and its wrong tokens go on counting.
  /// Guessing stays bounded by the per-address rate limit and the tokens' length.
  func authenticate(_ request: Request, _ context: Context, scope needed: AdminScope) throws
    -> AdminActor
  {
    let address = clientAddress(request, context)
    let token = try identify(request, context, address, among: tokens)
    guard token.scope.allows(needed) else {
      context.logger.warning(
        "admin request refused: insufficient scope",
        [
          "client_address": .string(address), "path": .string(LogRedaction.path(request.path)),
          "admin": .string(token.name), "scope": .string(token.scope.rawValue),
        ])
      throw HTTPError(
        403, code: "insufficient_scope",
        detail:
          "the token \"\(token.name)\" may \(token.scope.rawValue) only; this needs \(needed.rawValue)",
        headers: HTTPHeaders([
          ("WWW-Authenticate", "Bearer realm=\"storekeeper-admin\", error=\"insufficient_scope\"")
        ]))
    }
    return AdminActor(name: token.name, requestId: context.requestId, clientAddress: address)
  }

  /// For `/metrics`: any admin token (read scope suffices) or `METRICS_TOKEN`, under the same
  /// failure limit, so the metrics token cannot be guessed faster than an admin token.
  func authenticateMetrics(_ request: Request, _ context: Context) throws {
    let address = clientAddress(request, context)
    _ = try identify(request, context, address, among: tokens + (metricsToken.map { [$0] } ?? []))
  }

  /// The token a request presents among `candidates`, or 401 (none, or a wrong one) or 429 (a
  /// wrong one from an address refused for wrong ones).
  private func identify(
    _ request: Request, _ context: Context, _ address: String, among candidates: [AdminToken]
  ) throws -> AdminToken {
    guard let header = request.headers["Authorization"], header.count > 7,
      header.prefix(7).lowercased() == "bearer "
    else {
      // No bearer credential is no guess: logged, not counted against the address.
      fail(request, context, address, reason: "missing_bearer_token")
      throw Self.unauthorized("send Authorization: Bearer <admin token>")
    }
    let presented = match(Array(header.utf8.dropFirst(7)), among: candidates)
    if let seconds = limiter.judge(address, rightToken: presented != nil) {
      context.logger.warning(
        "admin authentication refused: too many failures",
        ["client_address": .string(address), "path": .string(LogRedaction.path(request.path))])
      throw HTTPError(
        429, code: "too_many_failures",
        detail: "too many wrong admin tokens from this address; retry after \(seconds) s",
        headers: HTTPHeaders([("Retry-After", String(seconds))]))
    }
    guard let token = presented else {
      fail(request, context, address, reason: "unknown_token")
      throw Self.unauthorized("the admin token is not valid")
    }
    return token
  }

  /// The token presented, if any: compared with every configured one, without early exit.
  func match(_ presented: [UInt8]) -> AdminToken? { match(presented, among: tokens) }

  private func match(_ presented: [UInt8], among candidates: [AdminToken]) -> AdminToken? {
    let digest = SHA256Digest.hash(presented)
    var found: AdminToken?
    for token in candidates {
      let equal =
        switch token.credential {
        case .plain(let secret): ConstantTime.equals(presented, secret)
        case .sha256(let stored): ConstantTime.equals(digest, stored)
        }
      if equal { found = token }
    }
    return found
  }

  private func fail(_ request: Request, _ context: Context, _ address: String, reason: String) {
    context.logger.warning(
      "admin authentication failed",
      [
        "client_address": .string(address), "path": .string(LogRedaction.path(request.path)),
        "reason": .string(reason),
      ])
  }

  private static func unauthorized(_ detail: String) -> HTTPError {
    HTTPError(
      401, code: "unauthorized", detail: detail,
      headers: HTTPHeaders([("WWW-Authenticate", "Bearer realm=\"storekeeper-admin\"")]))
  }
}

extension AdminScope {
  /// What a route needs: looking (GET, HEAD) needs read, anything else write.
  static func needed(for method: HTTPMethod) -> AdminScope {
    method == .get || method == .head ? .read : .write
  }
}
