import Foundation
import Testing

@testable import HTTP

/// Deferrable handlers: the immediate part answers on the loop's thread; when it defers, the
/// rest runs as an async handler placed as the route says; errors from either part are the
/// problem answer.
@Suite struct DeferrableHandlerTests {
  static func router(gate: Gate = Gate()) -> Router {
    var router = Router()
    router.addDeferrable(.get, "/choose/{how}") { request, context in
      let now = currentThreadName()
      switch context.parameters["how"] {
      case "now": return .response(Response.text("now " + now))
      case "refuse": throw HTTPError(409, code: "refused_now", detail: "refused on the loop")
      case "wait":
        return .later { _, _ in
          await gate.wait()
          return Response.text("later")
        }
      case "refuse-later":
        return .later { _, _ in
          throw HTTPError(422, code: "refused_later", detail: "refused in the task")
        }
      default:
        return .later { _, _ in Response.text("now \(now) later \(currentThreadName())") }
      }
    }
    return router
  }

  @Test func theImmediatePartRunsOnTheLoopAndTheRestOnThePool() async throws {
    try await withServer(router: Self.router()) { port, _ in
      let (now, later) = try await offPool { () -> (String, String) in
        let client = try TestClient(port: port)
        try client.send(get("/choose/now"))
        let now = try client.readResponse().text
        try client.send(get("/choose/pool"))
        return (now, try client.readResponse().text)
      }
      #expect(now.hasPrefix("now http-loop-"), "\(now)")
      let parts = later.split(separator: " ").map(String.init)
      #expect(parts.count == 4, "\(later)")
      #expect(parts[1].hasPrefix("http-loop-"), "\(later)")
      #expect(!parts[3].hasPrefix("http-loop-"), "\(later)")
    }
  }

  @Test func aDeferredRequestWaitsWithoutStallingItsLoop() async throws {
    let gate = Gate()
    try await withServer(router: Self.router(gate: gate), { $0.eventLoopCount = 1 }) { port, _ in
      let waiting = try await offPool { () -> TestClient in
        let client = try TestClient(port: port)
        try client.send(get("/choose/wait"))
        try gate.waitForArrivals(1)
        return client
      }
      let other = try await offPool { () -> Int in
        let client = try TestClient(port: port)
        try client.send(get("/choose/now"))
        return try client.readResponse().status
      }
      #expect(other == 200)
      gate.open()
      let reply = try await offPool { try waiting.readResponse() }
      #expect(reply.status == 200)
      #expect(reply.text == "later")
    }
  }

  @Test func errorsOfEitherPartAreProblemAnswers() async throws {
    try await withServer(router: Self.router()) { port, _ in
      let replies = try await offPool { () -> [(Int, String)] in
        let client = try TestClient(port: port)
        var replies: [(Int, String)] = []
        for path in ["/choose/refuse", "/choose/refuse-later"] {
          try client.send(get(path))
          let reply = try client.readResponse()
          replies.append((reply.status, reply.text))
        }
        return replies
      }
      #expect(replies.map(\.0) == [409, 422])
      #expect(replies[0].1.contains("\"refused_now\""), "\(replies[0].1)")
      #expect(replies[1].1.contains("\"refused_later\""), "\(replies[1].1)")
    }
  }

  @Test func inProcessHandlingTakesBothPaths() async {
    let router = Self.router()
    let now = await router.handle(Request(method: .get, target: "/choose/now"))
    let later = await router.handle(Request(method: .get, target: "/choose/pool"))
    let refused = await router.handle(Request(method: .get, target: "/choose/refuse-later"))
    #expect(now.status == 200)
    #expect(String(decoding: now.body, as: UTF8.self).hasPrefix("now "))
    #expect(String(decoding: later.body, as: UTF8.self).contains(" later "))
    #expect(refused.status == 422)
    #expect(refused.headers["X-Request-Id"] != nil)
  }
}
