import Foundation
import Testing

@testable import HTTP

struct Boom: Error {}

@Suite struct RouterTests {
  func router() -> Router {
    var router = Router()
    router.add(.get, "/v1/orders/{trade_no}") { _, context in
      Response.text("order \(context.parameters["trade_no"] ?? "?")")
    }
    router.add(.post, "/v1/orders") { request, _ in
      Response(status: 201, body: request.body)
    }
    router.addImmediate(.get, "/healthz") { _, _ in Response.text("ok") }
    router.add(.get, "/v1/users/{user_id}/entitlements") { request, context in
      Response.text("\(context.parameters["user_id"] ?? "?") \(request.query["verbose"] ?? "-")")
    }
    router.add(.post, "/invalid") { _, _ in
      throw HTTPError(
        422, code: "invalid_order", detail: "Bad input.",
        fields: [FieldError(field: "quantity", message: "must be 1-10")])
    }
    router.add(.get, "/boom") { _, _ in throw Boom() }
    return router
  }

  func json(_ response: Response) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
  }

  @Test func matchesPathParametersAndDecodesThem() async {
    let response = await router().handle(Request(method: .get, target: "/v1/orders/T%20123"))
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self) == "order T 123")
  }

  @Test func parameterMayContainAnEncodedSlash() async {
    let response = await router().handle(
      Request(method: .get, target: "/v1/users/guest%2Fx/entitlements?verbose=a+b"))
    #expect(String(decoding: response.body, as: UTF8.self) == "guest/x a b")
  }

  /// A route's literal words match only as spelled: an encoded `/` stays inside its segment,
  /// and an encoded letter is no letter of a route, so neither names a route (a proxy that
  /// keeps `/admin/` off the public side lets `/admin%2Fv1%2Fwhoami` and `/%61dmin/v1/whoami`
  /// through; audit http, finding 2, found the second). Parameters are decoded.
  @Test func anEscapeInARoutesLiteralWordsMatchesNoRoute() async {
    var router = Router()
    router.addImmediate(.get, "/admin/v1/whoami") { _, _ in Response.text("admin") }
    router.addImmediate(.get, "/v1/products") { _, _ in Response.text("catalog") }
    router.add(.get, "/v1/users/{user_id}/entitlements") { _, context in
      Response.text(context.parameters["user_id"] ?? "?")
    }
    for target in [
      "/admin%2Fv1%2Fwhoami", "/admin/v1%2fwhoami", "/v1%2Fproducts", "/v1%2fproducts?a=b",
      "http://x/v1%2Fproducts", "/%61dmin/v1/whoami", "/admin/%761/whoami", "/v1/pr%6Fducts",
      "/v1/%75sers/a/entitlements", "/v1/users/a/entitlement%73",
    ] {
      #expect(await router.handle(Request(method: .get, target: target)).status == 404, "\(target)")
    }
    // An encoded slash in the query is no part of the path.
    for target in ["/v1/products?next=%2F", "http://x/v1/products?%2F"] {
      let response = await router.handle(Request(method: .get, target: target))
      #expect(String(decoding: response.body, as: UTF8.self) == "catalog", "\(target)")
    }
    for (target, user) in [
      ("/v1/users/a%2Fb/entitlements", "a/b"), ("/v1/users/%61b/entitlements", "ab"),
    ] {
      let response = await router.handle(Request(method: .get, target: target))
      #expect(String(decoding: response.body, as: UTF8.self) == user, "\(target)")
    }
  }

  @Test func unknownPathIs404ProblemJSON() async throws {
    let response = await router().handle(Request(method: .get, target: "/nope"))
    #expect(response.status == 404)
    #expect(response.headers["Content-Type"] == "application/problem+json")
    let body = try json(response)
    #expect(body["code"] as? String == "not_found")
    #expect(body["status"] as? Int == 404)
    #expect(body["type"] as? String == "about:blank")
    #expect(body["title"] as? String == "Not Found")
  }

  @Test func wrongMethodIs405WithAllowIncludingHead() async throws {
    let response = await router().handle(Request(method: .delete, target: "/v1/orders/T1"))
    #expect(response.status == 405)
    #expect(response.headers["Allow"] == "GET, HEAD")
    let post = await router().handle(Request(method: .get, target: "/v1/orders"))
    #expect(post.status == 405)
    #expect(post.headers["Allow"] == "POST")
  }

  @Test(arguments: ["TRACE", "CONNECT", "FOO", "get", "OPTIONS"])
  func anyMethodWithoutAHandlerOnAnExistingPathIs405WithAllow(_ token: String) async throws {
    let order = await router().handle(Request(method: HTTPMethod(token), target: "/v1/orders/T1"))
    #expect(order.status == 405)
    #expect(order.headers["Allow"] == "GET, HEAD")
    #expect(try json(order)["code"] as? String == "method_not_allowed")
    let orders = await router().handle(Request(method: HTTPMethod(token), target: "/v1/orders"))
    #expect(orders.status == 405)
    #expect(orders.headers["Allow"] == "POST")
  }

  @Test(arguments: ["TRACE", "CONNECT", "FOO"])
  func anyMethodOnAnUnknownPathIs404(_ token: String) async throws {
    let response = await router().handle(Request(method: HTTPMethod(token), target: "/nope"))
    #expect(response.status == 404)
    #expect(response.headers["Allow"] == nil)
  }

  @Test func headRunsTheGetRouteWithoutABody() async {
    let response = await router().handle(Request(method: .head, target: "/healthz"))
    #expect(response.status == 200)
    #expect(response.body.isEmpty)
    #expect(response.headers["Content-Length"] == "2")
  }

  @Test func httpErrorBecomesProblemWithFieldErrors() async throws {
    let response = await router().handle(Request(method: .post, target: "/invalid"))
    #expect(response.status == 422)
    let body = try json(response)
    #expect(body["code"] as? String == "invalid_order")
    #expect(body["detail"] as? String == "Bad input.")
    let errors = try #require(body["errors"] as? [[String: String]])
    #expect(errors == [["field": "quantity", "message": "must be 1-10"]])
  }

  @Test func otherErrorsBecomeAGeneric500() async throws {
    let response = await router().handle(Request(method: .get, target: "/boom"))
    #expect(response.status == 500)
    let text = String(decoding: response.body, as: UTF8.self)
    #expect(!text.contains("Boom"))
    #expect(try json(response)["code"] as? String == "internal_error")
  }

  @Test func echoesASaneRequestIdAndReplacesAnUnsafeOne() async {
    let echoed = await router().handle(
      Request(method: .get, target: "/healthz", headers: ["X-Request-Id": "abc.DEF-1_2"]))
    #expect(echoed.headers["X-Request-Id"] == "abc.DEF-1_2")
    let replaced = await router().handle(
      Request(method: .get, target: "/healthz", headers: ["X-Request-Id": "bad id\"<>"]))
    let id = replaced.headers["X-Request-Id"] ?? ""
    #expect(!id.isEmpty && id != "bad id\"<>")
    let tooLong = String(repeating: "a", count: 129)
    let long = await router().handle(
      Request(method: .get, target: "/healthz", headers: ["X-Request-Id": tooLong]))
    #expect(long.headers["X-Request-Id"] != tooLong)
  }

  @Test func listsRegisteredRoutes() {
    let routes = router().routes.map { "\($0.method) \($0.pattern)" }
    #expect(routes.contains("GET /v1/orders/{trade_no}"))
    #expect(routes.contains("POST /v1/orders"))
    #expect(routes.count == 6)
  }

  @Test func requestSplitsPathAndQuery() {
    let request = Request(method: .get, target: "/a%2Fb/c?x=1&y=two+words&x=2&flag")
    #expect(request.path == "/a/b/c")
    #expect(request.query == ["x": "1", "y": "two words", "flag": ""])
    let absolute = Request(method: .get, target: "http://example.com/a/b?q=1")
    #expect(absolute.path == "/a/b")
    #expect(absolute.query == ["q": "1"])
    // The authority ends at "?" or "#" too: what follows is the query, never the path.
    for target in ["http://x?/admin/v1/whoami", "http://x#/admin/v1/whoami", "http://x"] {
      #expect(Request(method: .get, target: target).path == "/")
    }
    #expect(
      Request(method: .get, target: "http://x?/admin/v1/whoami").query == ["/admin/v1/whoami": ""])
    let odd = Request(method: .get, target: "/p?&&a=b=c&=x&a=2&e%3D=%26#f=g")
    #expect(odd.query == ["a": "b=c", "": "x", "e=": "&"])
  }

  @Test func headersAreCaseInsensitiveAndOrdered() {
    var headers = HTTPHeaders([("Set-Cookie", "a"), ("set-cookie", "b")])
    #expect(headers.values("SET-COOKIE") == ["a", "b"])
    headers.replaceOrAdd("Set-Cookie", "c")
    #expect(headers.values("set-cookie") == ["c"])
    headers.remove("SET-cookie")
    #expect(headers["Set-Cookie"] == nil)
  }
}
