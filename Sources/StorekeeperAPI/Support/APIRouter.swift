import HTTP
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// The HTTP router with Storekeeper's error policy applied to every handler in one place:
/// the domain's refusals become their problem answers (`DomainProblems`); a database that
/// cannot be reached becomes 503 with `Retry-After`, quickly; other database errors are logged
/// with their SQLSTATE and become a 500 that says nothing of internals.
package struct APIRouter {
  package private(set) var router = Router()
  /// Rate limits applied to every route as `RateLimitRules` says; nil: none (in-process tests).
  let limiter: RateLimiter?
  /// Who sent a request (`AppAuthenticator.caller`), for the per-user bucket: a signed-in
  /// user's own bucket (so nobody can spend another user's by naming them), or the bucket of
  /// the user a trusted caller names. Nil: no app authentication (in-process tests).
  let identify: (@Sendable (Request, Context) async throws -> Caller)?

  package init(
    logger: Logger, limiter: RateLimiter? = nil,
    identify: (@Sendable (Request, Context) async throws -> Caller)? = nil
  ) {
    router.logger = logger
    self.limiter = limiter
    self.identify = identify
  }

  /// The answer an idempotent route gave before to a request with this one's key and body, or
  /// nil when it gave none.
  typealias Replay = @Sendable (Request, Context) async throws -> Response?

  /// `maxBodyBytes`: a route whose bodies are small refuses a larger one with 413 before
  /// anything reads it, the rate limits included (naming the user of a trusted caller parses
  /// the body), rather than parse up to the server's 1 MiB on an event loop. `replay`: a
  /// request the user's bucket refuses is answered by it when it can be, instead of 429.
  mutating func add(
    _ method: HTTPMethod, _ pattern: String, placement: HandlerPlacement = .taskPool,
    maxBodyBytes: Int? = nil, replay: Replay? = nil, _ handler: @escaping Handler
  ) {
    let mapped: Handler = { request, context in
      do {
        return try await handler(request, context)
      } catch {
        throw Self.mapped(error, context)
      }
    }
    let limited = limited(method, pattern, mapped, replay: replay)
    guard let maxBodyBytes else {
      router.add(method, pattern, placement: placement, limited)
      return
    }
    router.add(method, pattern, placement: placement) { request, context in
      guard request.body.count <= maxBodyBytes else {
        throw HTTPError(
          413, code: "content_too_large",
          detail: "This route takes a body of at most \(maxBodyBytes) bytes.")
      }
      return try await limited(request, context)
    }
  }

  mutating func addImmediate(
    _ method: HTTPMethod, _ pattern: String, _ handler: @escaping ImmediateHandler
  ) {
    router.addImmediate(method, pattern, limited(method, pattern, handler))
  }

  /// An immediate handler that may defer the rest of a request to an async one running as
  /// `placement` says; both parts get the same error policy.
  mutating func addDeferrable(
    _ method: HTTPMethod, _ pattern: String, placement: HandlerPlacement = .taskPool,
    _ handler: @escaping DeferrableHandler
  ) {
    let mapped: DeferrableHandler = { request, context in
      do {
        switch try handler(request, context) {
        case .response(let response): return .response(response)
        case .later(let rest):
          return .later { request, context in
            do {
              return try await rest(request, context)
            } catch {
              throw Self.mapped(error, context)
            }
          }
        }
      } catch {
        throw Self.mapped(error, context)
      }
    }
    router.addDeferrable(method, pattern, placement: placement, limited(method, pattern, mapped))
  }

  /// The domain's refusals as their problem answers, database errors as 503 or 500.
  static func mapped(_ error: any Error, _ context: Context) -> any Error {
    switch error {
    case let refusal as any DomainProblem:
      return refusal.problem
    case let refused as OrderStateMachine.Refused:
      context.logger.error("illegal order transition", ["error": .string(refused.description)])
      return refused.problem
    case let error as PostgresError:
      return map(error, context)
    default:
      return error
    }
  }

  static func map(_ error: PostgresError, _ context: Context) -> HTTPError {
    if HTTPError.isDeparture(error) {
      // Its client left and the request's task was cancelled, which cancels the statement
      // (57014) or the wait for a session: nothing failed on the server's side.
      context.logger.info(
        "client left before its answer",
        ["sqlstate": .string(error.sqlState ?? ""), "route": .string(context.route)])
      return HTTPError.clientClosed
    }
    if error.isUnavailable {
      context.logger.warning("database unavailable", ["error": .string(error.message)])
      return HTTPError(
        503, code: "database_unavailable", detail: "the database cannot be reached; retry shortly",
        headers: HTTPHeaders([("Retry-After", "2")]))
    }
    if error.isTransientConflict {
      // PostgreSQL rolled the whole transaction back to break a deadlock or a serialization
      // conflict: nothing was done, and the same request can succeed a moment later.
      context.logger.warning(
        "database conflict",
        ["sqlstate": .string(error.sqlState ?? ""), "error": .string(error.message)])
      return HTTPError(
        503, code: "conflict_retry",
        detail: "another change to the same data got there first; retry",
        headers: HTTPHeaders([("Retry-After", "1")]))
    }
    context.logger.error(
      "database error",
      [
        "sqlstate": .string(error.sqlState ?? ""), "error": .string(error.message),
        "constraint": .string(error.constraint ?? ""),
      ])
    return HTTPError(500, code: "internal_error", detail: "an internal error occurred")
  }
}
