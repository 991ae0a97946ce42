import AppAuth
import HTTP
import StorekeeperCore

/// The edge's one source of identity for app routes: turns a request's credentials into a
/// `Caller` (401 when they do not prove one), and decides which user a request acts for
/// (403 when a signed-in user names someone else). Route files call it; no handler repeats
/// the rules.
package struct AppAuthenticator: Sendable {
  enum Mode: Sendable {
    case jwt(JWTVerifier)
    case apiKeys(APIKeySet)
    case none
  }

  let mode: Mode
  /// `RECEIPTS_WITHOUT_SIGN_IN=true`: a receipt post with no `Authorization` at all is an
  /// `anonymous` caller instead of a 401, so seed 000's app (no sign-in) can be served without
  /// `APP_AUTH=none`. A userless post credits nobody and its proof is Apple's to judge.
  var receiptsWithoutSignIn = false

  /// The key set fetched from `APP_JWT_JWKS_URL`, when tokens are checked against one: fetched
  /// once at start-up, and reported in `/readyz` and `/metrics` (`AppJWKSHealth`).
  package var jwks: JWKSKeySource? {
    guard case .jwt(let verifier) = mode else { return nil }
    return verifier.keys as? JWKSKeySource
  }

  /// The routes where that applies; every other route still needs credentials.
  static let anonymousRoutes: Set<String> = ["/v1/receipts", "/v1/receipts.xml"]

  /// The caller this request's rate limit already authenticated (set around its handler only),
  /// so a token is verified once per request.
  @TaskLocal static var authenticated: Caller?

  package func caller(_ request: Request, _ context: Context) async throws -> Caller {
    if let known = Self.authenticated { return known }
    if isAnonymous(request, context) { return .anonymous }
    switch mode {
    case .none, .apiKeys:
      // Proven without waiting.
      return try callerNow(request, context) ?? .anyone
    case .jwt(let verifier):
      let token = try Self.bearer(request)
      do {
        // Public-key arithmetic and fetches leave the event loop; an HMAC is cheaper than
        // the hop.
        let claims =
          verifier.isExpensive
          ? try await withTaskExecutorPreference(globalConcurrentExecutor) {
            try await verifier.verify(token)
          }
          : try await verifier.verify(token)
        guard let sub = claims.sub, UserId.isValid(sub) else { throw JWTError.missingClaim("sub") }
        return .user(sub)
      } catch let error as JWTError {
        context.logger.notice("app token refused", ["reason": .string("\(error)")])
        throw Self.invalid(error.publicReason)
      }
    }
  }

  /// The caller, when proving it needs no waiting (`APP_AUTH=none` or `api_key`), for handlers
  /// that answer on the event loop; nil when a token must be verified (`caller` does that).
  package func callerNow(_ request: Request, _ context: Context) throws -> Caller? {
    if let known = Self.authenticated { return known }
    if isAnonymous(request, context) { return .anonymous }
    switch mode {
    case .none:
      return .anyone
    case .apiKeys(let keys):
      guard let name = keys.match(try Self.bearer(request)) else {
        context.logger.notice("app request refused", ["reason": .string("unknown API key")])
        throw Self.invalid("the API key is not valid")
      }
      return .backend(name)
    case .jwt:
      return nil
    }
  }

  /// Whether this request is an anonymous receipt post: the setting is on, the route is one of
  /// `anonymousRoutes` (the pattern that matched, so the rate limits' look-up and the handler
  /// agree), and no `Authorization` was sent. Any credential, even a bad one, is checked as
  /// usual: a refused token is never worth less than none.
  private func isAnonymous(_ request: Request, _ context: Context) -> Bool {
    guard receiptsWithoutSignIn, request.method == .post,
      Self.anonymousRoutes.contains(context.route), request.headers["Authorization"] == nil
    else { return false }
    if case .none = mode { return false }
    return true
  }

  /// The user a request acts for, given the one it names in its body or path (nil: none
  /// named). A signed-in user acts only for themselves and may leave the name out; a trusted
  /// caller acts for whoever it names; an anonymous one for nobody, so naming a user needs
  /// credentials (401, as without the setting).
  func user(_ caller: Caller, named claimed: String?) throws -> String? {
    if caller == .anonymous {
      guard claimed == nil else { throw Self.signInRequired }
      return nil
    }
    guard let own = caller.confinedTo else { return claimed }
    if let claimed, !UserId.same(claimed, own) {
      throw HTTPError(
        403, code: "user_mismatch", detail: "the request names a user other than the token's")
    }
    return own
  }

  private static func bearer(_ request: Request) throws -> String {
    guard let header = request.headers["Authorization"], header.count > 7,
      header.prefix(7).lowercased() == "bearer "
    else { throw signInRequired }
    return String(header.dropFirst(7))
  }

  /// The 401 of a request that sent no credentials where they are needed.
  static var signInRequired: HTTPError {
    HTTPError(
      401, code: "unauthorized", detail: "send Authorization: Bearer <token>",
      headers: HTTPHeaders([("WWW-Authenticate", "Bearer realm=\"storekeeper\"")]))
  }

  private static func invalid(_ detail: String) -> HTTPError {
    HTTPError(
      401, code: "invalid_token", detail: detail,
      headers: HTTPHeaders([
        ("WWW-Authenticate", "Bearer realm=\"storekeeper\", error=\"invalid_token\"")
      ]))
  }
}
