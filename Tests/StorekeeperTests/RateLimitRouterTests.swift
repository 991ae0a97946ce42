import HTTP
import StorekeeperLogging
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// In-process, without a database: which routes are limited and what a limited answer says.
@Suite struct RateLimitRouterTests {
  static func router(
    perAddress: String = "1/min,burst=2", perUser: String = "off", trusted: String = "",
    proofBytes: String = "off"
  ) throws -> Router {
    var config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.limits")
    config.rateLimitPerAddress = try RateSpec.parse(perAddress)
    config.rateLimitPerUser = try RateSpec.parse(perUser)
    config.trustedProxies = ClientAddress.parseTrusted(trusted) ?? []
    config.proofBytesPerUser = try RateSpec.parse(proofBytes, sizes: true)
    return try Application(config: config, logger: Logger(label: "test", level: .critical)).router
  }

  static func get(
    _ router: Router, _ path: String, from peer: String = "198.51.100.1:4000",
    forwardedFor: String? = nil
  ) async -> Response {
    var headers = HTTPHeaders()
    if let forwardedFor { headers.add("X-Forwarded-For", forwardedFor) }
    return await router.handle(
      Request(method: .get, target: path, headers: headers), remoteAddress: peer)
  }

  @Test func pastTheBurstAnAddressGets429WithRetryAfterAndRateLimitFields() async throws {
    let router = try Self.router()
    let first = await Self.get(router, "/admin/v1/products")
    #expect(first.status == 401)
    #expect(first.headers["RateLimit-Limit"] == "2")
    #expect(first.headers["RateLimit-Remaining"] == "1")
    #expect(first.headers["RateLimit-Reset"] == "60")
    #expect(await Self.get(router, "/admin/v1/products").headers["RateLimit-Remaining"] == "0")
    let refused = await Self.get(router, "/v1/products")
    #expect(refused.status == 429)
    #expect(refused.headers["Content-Type"] == "application/problem+json")
    #expect(refused.headers["Retry-After"] == "60")
    #expect(refused.headers["RateLimit-Remaining"] == "0")
    #expect(String(decoding: refused.body, as: UTF8.self).contains("\"rate_limited\""))
    // Another address has its own bucket; operators' and Apple's routes are not limited.
    #expect(await Self.get(router, "/v1/products", from: "198.51.100.2:4000").status != 429)
    let health = await Self.get(router, "/healthz")
    #expect(health.status == 200 && health.headers["RateLimit-Limit"] == nil)
    let apple = await router.handle(
      Request(method: .post, target: "/v1/apple/notifications", body: Array("{}".utf8)),
      remoteAddress: "198.51.100.1:4000")
    #expect(apple.status != 429 && apple.headers["RateLimit-Limit"] == nil)
  }

  /// Google's pushes come in bursts from Google's shared addresses and are authenticated by
  /// their OIDC token, like Apple's notifications: never 429, which would only delay refunds
  /// and renewals. `/metrics` counts in the address's bucket, as openapi.yaml says.
  @Test func googlePushesAreNotLimitedAndMetricsIs() async throws {
    let router = try Self.router()
    for _ in 0..<3 {
      let push = await router.handle(
        Request(
          method: .post, target: "/v1/google/notifications",
          headers: ["Content-Type": "application/json"], body: Array("{}".utf8)),
        remoteAddress: "198.51.100.1:4000")
      #expect(push.status != 429 && push.headers["RateLimit-Limit"] == nil)
    }
    let first = await Self.get(router, "/metrics")
    #expect(first.status == 401 && first.headers["RateLimit-Limit"] == "2")
    _ = await Self.get(router, "/metrics")
    let refused = await Self.get(router, "/metrics")
    #expect(refused.status == 429)
    #expect(String(decoding: refused.body, as: UTF8.self).contains("\"rate_limited\""))
  }

  @Test func aSpoofedForwardedForFromAnUntrustedPeerDoesNotBuyANewBucket() async throws {
    let router = try Self.router(trusted: "10.0.0.0/8")
    for i in 0..<2 {
      _ = await Self.get(router, "/v1/products", forwardedFor: "203.0.113.\(i)")
    }
    #expect(await Self.get(router, "/v1/products", forwardedFor: "203.0.113.9").status == 429)
  }

  @Test func behindATrustedProxyEachForwardedClientHasItsOwnBucket() async throws {
    let router = try Self.router(trusted: "10.0.0.0/8")
    for _ in 0..<2 {
      _ = await Self.get(router, "/v1/products", from: "10.0.0.1:80", forwardedFor: "203.0.113.1")
    }
    #expect(
      await Self.get(router, "/v1/products", from: "10.0.0.1:80", forwardedFor: "203.0.113.1")
        .status == 429)
    #expect(
      await Self.get(router, "/v1/products", from: "10.0.0.1:80", forwardedFor: "203.0.113.2")
        .status != 429)
  }

  @Test func ordersCountPerUserAsWellAsPerAddress() async throws {
    let router = try Self.router(perAddress: "1000/s", perUser: "1/min,burst=1")
    func order(_ user: String, from peer: String) async -> Response {
      await router.handle(
        Request(
          method: .post, target: "/v1/orders",
          headers: ["Content-Type": "application/json"],
          body: Array(#"{"user_id":"\#(user)","product_id":"gold"}"#.utf8)),
        remoteAddress: peer)
    }
    // The first gets past the limits (and fails on the absent database); the second is refused
    // from any address; another user is not.
    #expect(await order("mallory", from: "198.51.100.1:1").status != 429)
    let refused = await order("mallory", from: "198.51.100.2:1")
    #expect(refused.status == 429 && refused.headers["RateLimit-Limit"] == "1")
    #expect(await order("trent", from: "198.51.100.1:1").status != 429)
  }

  /// Issue 22: one user's flood of big receipts is refused once it has spent its proof budget,
  /// with the same 429 as the other limits, and another user's posts are not.
  @Test func receiptsAndReportsSpendTheUsersProofBudget() async throws {
    let router = try Self.router(
      perAddress: "1000/s,burst=1000", perUser: "1000/s,burst=1000", proofBytes: "2MB/h")
    func post(_ path: String, _ user: String, junk: Int) async -> Response {
      let filler = String(repeating: "A", count: junk)
      return await router.handle(
        Request(
          method: .post, target: path, headers: ["Content-Type": "application/json"],
          body: Array(#"{"user_id":"\#(user)","receipt":"\#(filler)"}"#.utf8)),
        remoteAddress: "198.51.100.1:1")
    }
    // Two 900 KB receipts fit in 2 MB; the third does not, wherever it is posted.
    #expect(await post("/v1/receipts", "mallory", junk: 900_000).status != 429)
    #expect(await post("/v1/receipts", "mallory", junk: 900_001).status != 429)
    let refused = await post("/v1/receipts", "mallory", junk: 900_002)
    #expect(refused.status == 429)
    #expect(refused.headers["Content-Type"] == "application/problem+json")
    #expect(refused.headers.values("RateLimit-Limit") == ["2000000"])
    #expect(Int(refused.headers["Retry-After"] ?? "") ?? 0 >= 1)
    #expect(String(decoding: refused.body, as: UTF8.self).contains("\"rate_limited\""))
    #expect(await post("/v1/receipts", "trent", junk: 900_000).status != 429)
  }
}
