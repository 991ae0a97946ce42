import Foundation
import HTTP
import StorekeeperLogging
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// In-process, without sockets or a database: what the API answers before any data is read.
@Suite struct RouterPolicyTests {
  static let token = "0123456789abcdef0123"

  static func app() throws -> Application {
    var config = AppConfig(
      databaseURL: "postgresql://nobody@127.0.0.1:1/none", bundleId: "com.example.router")
    config.adminTokens = [AdminToken(name: "ops", token: token)]
    return try Application(config: config, logger: Logger(label: "test", level: .critical))
  }

  static func problem(_ response: Response) throws -> [String: JSONValue] {
    guard case .object(let fields) = try JSONCoding.decode(JSONValue.self, from: response.body)
    else { return [:] }
    return fields
  }

  @Test func adminRoutesRefuseMissingOrWrongTokensWithoutReadingProducts() async throws {
    let router = try Self.app().router
    for header in [nil, "Bearer wrong-token-wrong-token", "Basic b3BzOnNlY3JldA==", "Bearer "] {
      var headers = HTTPHeaders()
      if let header { headers.add("Authorization", header) }
      let response = await router.handle(
        Request(method: .get, target: "/admin/v1/products", headers: headers))
      #expect(response.status == 401)
      #expect(response.headers["Content-Type"] == "application/problem+json")
      #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
      #expect(try Self.problem(response)["code"] == .string("unauthorized"))
      #expect(!String(decoding: response.body, as: UTF8.self).contains("product_id"))
    }
  }

  @Test func theCatalogIsServedFromMemoryWithAStrongETag() async throws {
    let router = try Self.app().router
    let first = await router.handle(Request(method: .get, target: "/v1/products"))
    #expect(first.status == 200)
    #expect(first.headers["Cache-Control"] == "no-cache")
    let etag = try #require(first.headers["ETag"])
    #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
    let again = await router.handle(
      Request(method: .get, target: "/v1/products", headers: HTTPHeaders([("If-None-Match", etag)]))
    )
    #expect(again.status == 304)
    #expect(again.body.isEmpty)
    let missing = await router.handle(
      Request(method: .get, target: "/v1/products/com.example.none"))
    #expect(missing.status == 404)
    #expect(try Self.problem(missing)["code"] == .string("product_not_found"))
  }

  @Test func aDatabaseThatCannotBeReachedIsA503() async throws {
    let router = try Self.app().router
    let response = await router.handle(
      Request(
        method: .post, target: "/v1/orders",
        headers: HTTPHeaders([("Content-Type", "application/json")]),
        body: Array(#"{"user_id":"guest:1","product_id":"com.example.gold"}"#.utf8)))
    #expect(response.status == 503)
    #expect(response.headers["Retry-After"] != nil)
    #expect(try Self.problem(response)["code"] == .string("database_unavailable"))
  }

  @Test func malformedBodiesAreProblemsNamingTheField() async throws {
    let router = try Self.app().router
    func post(_ body: String, type: String = "application/json") async -> Response {
      await router.handle(
        Request(
          method: .post, target: "/v1/orders", headers: HTTPHeaders([("Content-Type", type)]),
          body: Array(body.utf8)))
    }
    #expect(try Self.problem(await post("{"))["code"] == .string("malformed_json"))
    #expect(await post("[1]").status == 400)
    #expect(await post("{}", type: "text/plain").status == 415)
    let invalid = await post(#"{"user_id":"","product_id":"g","quantity":11,"colour":1}"#)
    #expect(invalid.status == 422)
    guard case .array(let errors)? = try Self.problem(invalid)["errors"] else {
      Issue.record("no errors")
      return
    }
    let fields = errors.compactMap { error -> String? in
      if case .object(let fields) = error, case .string(let name)? = fields["field"] { return name }
      return nil
    }
    #expect(Set(fields) == ["user_id", "quantity", "colour"])
  }
}
