import Digest
import Foundation
import HTTP
import StorekeeperLogging
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// In-process, without a database (it is unreachable: a request that passes authentication
/// ends in 503): which tokens get in, with which scope, and when an address is refused.
@Suite struct AdminAuthenticatorTests {
  static let writer = "writer-token-0123456789"
  static let reader = "reader-token-0123456789"
  static let hashed = "hashed-token-0123456789"

  static func app(limit: Int = 10) throws -> Application {
    var config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.admin")
    config.adminTokens = try AdminToken.parseList(
      "ops:\(writer),viewer:\(reader):read,ci:sha256:\(SHA256Digest.hex(hashed))")
    config.adminAuthFailureLimit = limit
    return try Application(config: config, logger: Logger(label: "test", level: .critical))
  }

  static func send(
    _ router: Router, _ method: HTTPMethod, _ target: String, token: String?,
    from address: String = "192.0.2.1"
  ) async -> Response {
    var headers = HTTPHeaders()
    if let token { headers.add("Authorization", "Bearer \(token)") }
    var body: [UInt8] = []
    if method != .get && method != .delete {
      headers.add("Content-Type", "application/json")
      body = Array(#"{"to_user_id":"erin"}"#.utf8)
    }
    return await router.handle(
      Request(method: method, target: target, headers: headers, body: body),
      remoteAddress: address)
  }

  static func code(_ response: Response) throws -> String? {
    guard case .object(let fields) = try JSONCoding.decode(JSONValue.self, from: response.body),
      case .string(let code) = fields["code"]
    else { return nil }
    return code
  }

  @Test func theClientAddressIsThePeerWithoutItsPort() {
    #expect(ClientAddress.host(ofPeer: "192.0.2.1:5000") == "192.0.2.1")
    #expect(ClientAddress.host(ofPeer: "[2001:db8::1]:443") == "2001:db8::1")
    #expect(ClientAddress.host(ofPeer: "[::1]:8080") == "::1")
    #expect(ClientAddress.host(ofPeer: "unknown") == "unknown")
  }

  @Test func failuresCountPerAddressWhateverThePeerPort() async throws {
    let router = try Self.app(limit: 2).router
    for port in [40001, 40002] {
      let wrong = await Self.send(
        router, .get, "/admin/v1/orders", token: "guess-0123456789", from: "192.0.2.9:\(port)")
      #expect(wrong.status == 401)
    }
    let refused = await Self.send(
      router, .get, "/admin/v1/orders", token: "guess-9876543210", from: "192.0.2.9:40003")
    #expect(refused.status == 429)
  }

  @Test func aHashedTokenIsAcceptedByItsDigestAndTheDigestItselfIsNot() async throws {
    let app = try Self.app()
    let allowed = await Self.send(app.router, .get, "/admin/v1/products", token: Self.hashed)
    #expect(allowed.status == 503, "authenticated, then the database is unreachable")
    let refused = await Self.send(
      app.router, .get, "/admin/v1/products", token: SHA256Digest.hex(Self.hashed))
    #expect(refused.status == 401)
    #expect(app.router.routes.count > 0)
  }

  @Test func aReadTokenReadsButChangesNothing() async throws {
    let router = try Self.app().router
    for target in ["/admin/v1/products", "/admin/v1/orders", "/admin/v1/audit"] {
      let response = await Self.send(router, .get, target, token: Self.reader)
      #expect(response.status == 503, "\(target)")
    }
    for (method, target) in [
      (HTTPMethod.put, "/admin/v1/products/com.example.gold"),
      (.patch, "/admin/v1/products/com.example.gold"),
      (.delete, "/admin/v1/products/com.example.gold"),
      (.post, "/admin/v1/transactions/2000000000000001/transfer"),
    ] {
      let refused = await Self.send(router, method, target, token: Self.reader)
      #expect(refused.status == 403, "\(method.rawValue) \(target)")
      #expect(try Self.code(refused) == "insufficient_scope")
      #expect(refused.headers["WWW-Authenticate"]?.contains("insufficient_scope") == true)
      let written = await Self.send(router, method, target, token: Self.writer)
      #expect(written.status != 403 && written.status != 401, "\(method.rawValue) \(target)")
    }
  }

  @Test func wrongTokensFromOneAddressAreRefusedWithRetryAfter() async throws {
    let router = try Self.app(limit: 3).router
    // No bearer credential is not a guess: it never counts.
    for _ in 0..<5 {
      #expect(await Self.send(router, .get, "/admin/v1/products", token: nil).status == 401)
    }
    for _ in 0..<3 {
      let wrong = await Self.send(router, .get, "/admin/v1/products", token: "guess-0123456789")
      #expect(wrong.status == 401)
    }
    let refused = await Self.send(
      router, .get, "/admin/v1/products", token: "guess-9876543210")
    #expect(refused.status == 429)
    #expect(try Self.code(refused) == "too_many_failures")
    let seconds = try #require(refused.headers["Retry-After"].flatMap(Int.init))
    #expect((1...60).contains(seconds))
    let elsewhere = await Self.send(
      router, .get, "/admin/v1/products", token: "guess-9876543210", from: "192.0.2.2")
    #expect(elsewhere.status == 401, "another address is unaffected")
    let publicAPI = await router.handle(
      Request(method: .get, target: "/v1/products"), remoteAddress: "192.0.2.1")
    #expect(publicAPI.status == 200, "the public API is unaffected")
  }

  /// Someone else's wrong tokens from the admin's address (a NAT, a proxy) never lock the admin
  /// out: the right token is served while wrong ones get 429, and those go on counting.
  @Test func aRightTokenIsServedWhileItsAddressIsRefusedForWrongOnes() async throws {
    let router = try Self.app(limit: 3).router
    for _ in 0..<3 {
      #expect(
        await Self.send(router, .get, "/admin/v1/orders", token: "guess-0123456789").status == 401)
    }
    for token in [Self.writer, Self.reader, Self.hashed] {
      let served = await Self.send(router, .get, "/admin/v1/products", token: token)
      #expect(served.status == 503, "authenticated (then the database is unreachable)")
      let guess = await Self.send(router, .get, "/admin/v1/products", token: "guess-0123456789")
      #expect(guess.status == 429)
      #expect(try Self.code(guess) == "too_many_failures")
    }
    let write = await Self.send(
      router, .post, "/admin/v1/transactions/1/transfer", token: Self.writer)
    #expect(write.status != 429 && write.status != 401)
    let scope = await Self.send(
      router, .post, "/admin/v1/transactions/1/transfer", token: Self.reader)
    #expect(scope.status == 403, "scope is still checked")
  }

  /// `/metrics` takes an admin token of either scope or `METRICS_TOKEN`, and nothing else; the
  /// metrics token opens nothing but `/metrics`.
  @Test func metricsNeedAnAdminOrMetricsToken() async throws {
    var config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.admin")
    config.adminTokens = try AdminToken.parseList("viewer:\(Self.reader):read")
    let metrics = "metrics-token-0123456789"
    config.metricsToken = try AdminToken.parseMetricsToken(metrics)
    let router = try Application(config: config, logger: Logger(label: "test", level: .critical))
      .router
    #expect(await Self.send(router, .get, "/metrics", token: nil).status == 401)
    #expect(
      await Self.send(router, .get, "/metrics", token: "wrong-token-0123456789").status == 401)
    for token in [Self.reader, metrics] {
      // Authenticated: answered with what is held in memory, the database's gauges left out.
      let scraped = await Self.send(router, .get, "/metrics", token: token)
      #expect(scraped.status == 200)
      #expect(
        String(decoding: scraped.body, as: UTF8.self).contains(
          "storekeeper_metrics_unread_sources "))
    }
    #expect(await Self.send(router, .get, "/admin/v1/products", token: metrics).status == 401)
  }
}
