import HTTP

extension APIRouter {
  /// Wraps a route's handler in its rate limits (`RateLimitRules`): over a limit it is 429 with
  /// `Retry-After`; every answer of a limited route carries the RateLimit-* fields of the
  /// bucket closest to refusing. A request the user's bucket refuses that `replay` answers (the
  /// same key and body as an operation already made) gets that answer instead of 429: a client
  /// retrying what went through is told so, whatever its bucket holds.
  func limited(
    _ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler, replay: Replay? = nil
  ) -> Handler {
    guard let limiter else { return handler }
    let scope = RateLimitRules.scope(method, pattern)
    if scope == .none { return handler }
    let identify = self.identify
    return { request, context in
      var decision = try Self.admit(limiter, request, context)
      do {
        let countsUser = scope.countsUser && limiter.perUser != nil
        let countsProofs = scope.countsProofs && limiter.proofBytesPerUser != nil
        guard scope.countsUser || scope.countsProofs else {
          return Self.annotate(try await handler(request, context), decision)
        }
        // The user is known only once the request is authenticated (its 401 comes first, with
        // the address bucket's headers); the handler reuses that caller instead of verifying
        // the token again.
        let caller = try await identify?(request, context)
        // Naming the user may mean parsing the body: not for limits that are off. A trusted
        // caller's report names no user: the app's backend is not held to a user's budget. An
        // anonymous receipt post acts for nobody (one naming a user is refused), so it draws
        // only its address's bucket and never the buckets of a user it names.
        if countsUser || countsProofs, caller != .anonymous,
          let userId = caller?.confinedTo ?? ActingUser.id(request, context)
        {
          if countsUser {
            let user = limiter.take(userId: userId)?.tighter(decision) ?? decision
            if let user, !user.allowed, let replay,
              let replayed = await Self.replayed(replay, request, context, caller)
            {
              return Self.annotate(replayed, user)
            }
            decision = try Self.refuseIfEmpty(user)
          }
          if countsProofs {
            decision = try Self.refuseIfEmpty(
              limiter.takeProof(userId: userId, body: request.body)?.tighter(decision)
                ?? decision)
          }
        }
        let response = try await AppAuthenticator.$authenticated.withValue(caller) {
          try await handler(request, context)
        }
        return Self.annotate(response, decision)
      } catch var error as HTTPError {
        // A 429 already names the bucket that refused: one set of fields, not two.
        if let decision, error.headers["RateLimit-Limit"] == nil {
          for (name, value) in decision.headers { error.headers.add(name, value) }
        }
        throw error
      }
    }
  }

  func limited(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping ImmediateHandler)
    -> ImmediateHandler
  {
    // Immediate handlers are limited by address only: with that limit off, no wrapper.
    guard let limiter, limiter.perAddress != nil else { return handler }
    let scope = RateLimitRules.scope(method, pattern)
    if scope == .none { return handler }
    return { request, context in
      let decision = try Self.admit(limiter, request, context)
      return Self.annotate(try handler(request, context), decision)
    }
  }

  /// Deferrable handlers are limited by address only, like immediate ones (their routes are
  /// reads): the bucket is taken once, on the loop, and its fields go on the answer whichever
  /// part gives it, refusals included.
  func limited(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping DeferrableHandler)
    -> DeferrableHandler
  {
    guard let limiter, limiter.perAddress != nil else { return handler }
    let scope = RateLimitRules.scope(method, pattern)
    if scope == .none { return handler }
    return { request, context in
      let decision = try Self.admit(limiter, request, context)
      do {
        switch try handler(request, context) {
        case .response(let response): return .response(Self.annotate(response, decision))
        case .later(let rest):
          return .later { request, context in
            do {
              return Self.annotate(try await rest(request, context), decision)
            } catch let error as HTTPError {
              throw Self.annotate(error, decision)
            }
          }
        }
      } catch let error as HTTPError {
        throw Self.annotate(error, decision)
      }
    }
  }

  /// A refusal carries the bucket's fields too, unless it is the 429 that already names one.
  private static func annotate(_ error: HTTPError, _ decision: RateLimitDecision?) -> HTTPError {
    guard let decision, error.headers["RateLimit-Limit"] == nil else { return error }
    var error = error
    for (name, value) in decision.headers { error.headers.add(name, value) }
    return error
  }

  /// The client address's bucket; 429 when it is empty.
  private static func admit(_ limiter: RateLimiter, _ request: Request, _ context: Context)
    throws -> RateLimitDecision?
  {
    // With the address limit off, finding the client's address is wasted work.
    guard limiter.perAddress != nil else { return nil }
    let address = limiter.clientAddress.resolve(
      peer: context.remoteAddress, forwardedFor: request.headers.values("X-Forwarded-For"))
    return try refuseIfEmpty(limiter.take(address: address))
  }

  /// The replay's answer to a request the user's bucket refused, or nil (then it is 429): a
  /// look-up that fails finds no replay.
  private static func replayed(
    _ replay: Replay, _ request: Request, _ context: Context, _ caller: Caller?
  ) async -> Response? {
    try? await AppAuthenticator.$authenticated.withValue(caller) {
      try await replay(request, context)
    }
  }

  private static func refuseIfEmpty(_ decision: RateLimitDecision?) throws -> RateLimitDecision? {
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
