import HTTP

extension APIRouter {
  /// Wraps a route's handler in its rate limits (`RateLimitRules`): over a limit it is 429 with
  /// `Retry-After`; every answer of a limited route carries the RateLimit-* fields of the
  /// bucket closest to refusing.
  func limited(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) -> Handler {
    guard let limiter else { return handler }
    let scope = RateLimitRules.scope(method, pattern)
    if scope == .none { return handler }
    return { request, context in
      let decision = try Self.admit(limiter, scope, request, context)
      do {
        return Self.annotate(try await handler(request, context), decision)
      } catch var error as HTTPError {
        if let decision { for (name, value) in decision.headers { error.headers.add(name, value) } }
        throw error
      }
    }
  }

  func limited(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping ImmediateHandler)
    -> ImmediateHandler
  {
    guard let limiter else { return handler }
    let scope = RateLimitRules.scope(method, pattern)
    if scope == .none { return handler }
    return { request, context in
      let decision = try Self.admit(limiter, scope, request, context)
      return Self.annotate(try handler(request, context), decision)
    }
  }

  private static func admit(
    _ limiter: RateLimiter, _ scope: RateLimitScope, _ request: Request, _ context: Context
  ) throws -> RateLimitDecision? {
    let address = limiter.clientAddress.resolve(
      peer: context.remoteAddress, forwardedFor: request.headers.values("X-Forwarded-For"))
    var decision = limiter.take(address: address)
    if decision?.allowed != false, scope == .addressAndUser,
      let userId = ActingUser.id(request, context)
    {
      decision = limiter.take(userId: userId)?.tighter(decision) ?? decision
    }
    guard let decision, !decision.allowed else { return decision }
    var headers = HTTPHeaders([("Retry-After", String(decision.retryAfterSeconds))])
    for (name, value) in decision.headers { headers.add(name, value) }
    throw HTTPError(
      429, code: "rate_limited",
      detail: "Too many requests from this client; retry after the time in Retry-After.",
      headers: headers)
  }

  private static func annotate(_ response: Response, _ decision: RateLimitDecision?) -> Response {
    guard let decision else { return response }
    var response = response
    for (name, value) in decision.headers { response.headers.replaceOrAdd(name, value) }
    return response
  }
}
