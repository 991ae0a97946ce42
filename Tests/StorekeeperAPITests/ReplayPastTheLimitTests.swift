import HTTP
import StorekeeperLogging
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Spending and granting a balance count per user (`RATE_LIMIT_PER_USER`), like creating an
/// order. Past that limit a request is 429 unless the route's replay answers it: an exact
/// retry of an operation already made is told what it made, not refused.
@Suite struct ReplayPastTheLimitTests {
  static let spend = "/v1/users/{user_id}/balances/{currency}/spend"

  @Test func spendsAndGrantsCountPerUser() {
    #expect(RateLimitRules.scope(.post, Self.spend) == .addressAndUser)
    #expect(
      RateLimitRules.scope(.post, "/v1/users/{user_id}/balances/{currency}/grant")
        == .addressAndUser)
    #expect(RateLimitRules.scope(.post, "/v1/orders") == .addressAndUser)
    #expect(RateLimitRules.scope(.get, "/v1/users/{user_id}/ledger") == .address)
  }

  /// A router with one spend route whose user bucket holds one request, and whose replay knows
  /// the key `made` (and fails outright for `broken`).
  static func router() -> Router {
    let limiter = RateLimiter(
      perAddress: nil, perUser: RateSpec(perSecond: 1.0 / 60, burst: 1), maxKeys: 100,
      clientAddress: ClientAddress(), nowNs: { 0 })
    var router = APIRouter(
      logger: Logger(label: "test", level: .critical), limiter: limiter,
      identify: { _, _ in .user("alice") })
    router.add(
      .post, spend,
      replay: { request, _ in
        switch request.headers["Idempotency-Key"] {
        case "made": Response(status: 200, headers: ["Idempotent-Replayed": "true"])
        case "broken": throw HTTPError(503, code: "database_unavailable")
        default: nil
        }
      }
    ) { _, _ in Response(status: 201) }
    return router.router
  }

  static func post(_ router: Router, key: String) async -> Response {
    await router.handle(
      Request(
        method: .post, target: "/v1/users/alice/balances/gold/spend",
        headers: ["Idempotency-Key": key, "Content-Type": "application/json"],
        body: Array(#"{"amount":1,"reason":"potion"}"#.utf8)))
  }

  @Test func pastTheLimitAReplayIsAnsweredAndAnythingElseIs429() async {
    let router = Self.router()
    let first = await Self.post(router, key: "made")
    #expect(first.status == 201 && first.headers["RateLimit-Remaining"] == "0")
    let refused = await Self.post(router, key: "new")
    #expect(refused.status == 429 && refused.headers["Retry-After"] != nil)
    #expect(String(decoding: refused.body, as: UTF8.self).contains("\"rate_limited\""))
    for _ in 0..<3 {
      let replayed = await Self.post(router, key: "made")
      #expect(replayed.status == 200 && replayed.headers["Idempotent-Replayed"] == "true")
      #expect(replayed.headers["RateLimit-Remaining"] == "0")
    }
    // A look-up that fails finds no replay: the limit answers.
    #expect(await Self.post(router, key: "broken").status == 429)
  }
}
