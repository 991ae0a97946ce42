import HTTP
import StorekeeperLogging
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI

/// `POST /v1/orders` runs on an event loop, so a body larger than any order is refused before
/// it is parsed there: 1 MiB of unknown keys held the loop, and every connection on it, for
/// 0.3 s (an audit, 2026-12). In-process, without a database.
@Suite struct OrderBodyLimitTests {
  static func router(perUser: String = "off") throws -> Router {
    var config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.orders")
    config.rateLimitPerAddress = try RateSpec.parse("1000/s,burst=1000")
    config.rateLimitPerUser = try RateSpec.parse(perUser)
    return try Application(config: config, logger: Logger(label: "test", level: .critical)).router
  }

  /// A JSON order naming `user`, padded with spaces to exactly `size` bytes.
  static func body(size: Int, user: String = "alice") -> [UInt8] {
    let order = Array(#"{"user_id":"\#(user)","product_id":"gold"}"#.utf8)
    return order.dropLast() + [UInt8](repeating: 0x20, count: size - order.count) + [0x7D]
  }

  static func post(_ router: Router, _ body: [UInt8]) async -> Response {
    await router.handle(
      Request(
        method: .post, target: "/v1/orders", headers: ["Content-Type": "application/json"],
        body: body),
      remoteAddress: "198.51.100.1:1")
  }

  @Test func aBodyOverSixteenKiBIs413ProblemJSON() async throws {
    let router = try Self.router()
    let refused = await Self.post(router, Self.body(size: OrderRoutes.maxBodyBytes + 1))
    #expect(refused.status == 413)
    #expect(refused.headers["Content-Type"] == "application/problem+json")
    #expect(String(decoding: refused.body, as: UTF8.self).contains("\"content_too_large\""))
    // Sixteen KiB is still read (and fails later, on the absent database).
    let read = await Self.post(router, Self.body(size: OrderRoutes.maxBodyBytes))
    #expect(read.status != 413)
  }

  /// The size is judged before the rate limits, which parse a trusted caller's body to name
  /// its user: refused bodies are neither parsed nor charged to the user's bucket.
  @Test func anOversizedBodyIsRefusedBeforeTheUsersBucketIsCharged() async throws {
    let router = try Self.router(perUser: "1/min,burst=1")
    for _ in 0..<3 {
      #expect(await Self.post(router, Self.body(size: 100_000)).status == 413)
    }
    #expect(await Self.post(router, Self.body(size: 100)).status != 429)
  }
}
