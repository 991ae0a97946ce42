import Foundation
import OutboundHTTP
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The server's outbound client against real sockets: what a peer can and cannot make it do.
@Suite final class OutboundHTTPSessionTests {
  let peer: ScriptedPeer

  init() throws {
    peer = try ScriptedPeer { line, body in
      switch line.split(separator: " ")[1] {
      case "/echo":
        return ScriptedPeer.answer(
          status: "201 Created", headers: ["X-Seen: \(body.count)", "Retry-After: 7"], body: body)
      case "/redirect":
        return ScriptedPeer.answer(
          status: "302 Found", headers: ["Location: /echo"], body: Array("moved".utf8))
      case "/large":
        return ScriptedPeer.answer(status: "200 OK", body: [UInt8](repeating: 65, count: 1 << 20))
      case "/garbage":
        return .bytes(Array("this is not HTTP at all\r\n\r\n".utf8))
      default:
        return .silence
      }
    }
  }

  deinit { peer.stop() }

  func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(peer.port)\(path)")! }

  @Test func postsTheBodyAndHeadersGivenAndKeepsTheAnswersHeaders() async throws {
    let body = Array("{\"a\":1}".utf8) + [UInt8](repeating: 66, count: 5000)
    let answer = try await OutboundHTTPSession().post(
      url: url("/echo"), body: body,
      headers: [("Content-Type", "application/json"), ("X-One", "1")],
      timeout: .seconds(30))
    #expect(answer.status == 201)
    #expect(answer.body == body)
    #expect(answer.headers["x-seen"] == "\(body.count)")
    #expect(answer.headers["retry-after"] == "7")
    let request = try #require(peer.seen.first)
    #expect(request.line.hasPrefix("POST /echo "))
    #expect(request.head.contains("\r\nContent-Type: application/json"))
    #expect(request.head.contains("\r\nX-One: 1"))
    // A body over 1 KiB is sent at once, not held for a 100-continue.
    #expect(!request.head.lowercased().contains("expect:"))
  }

  @Test func aRedirectIsAnAnswerNotFollowed() async throws {
    var request = URLRequest(url: url("/redirect"))
    request.httpMethod = "GET"
    let answer = try await OutboundHTTPSession().exchange(request, timeout: .seconds(30))
    #expect(answer.status == 302)
    #expect(answer.headers["location"] == "/echo")
    #expect(peer.seen.count == 1)
  }

  @Test func anAnswersBodyIsCutAtTheCap() async throws {
    let answer = try await OutboundHTTPSession(maxBody: 4096).send(
      URLRequest(url: url("/large")), timeout: .seconds(30))
    #expect(answer.status == 200)
    #expect(answer.body.count == 4096)
  }

  @Test func anAnswerThatIsNotHTTPIsSaidToBeSo() async {
    await #expect {
      try await OutboundHTTPSession().send(
        URLRequest(url: self.url("/garbage")), timeout: .seconds(30))
    } throws: { error in
      if case OutboundHTTPError.notHTTP = error { return true }
      return false
    }
  }

  @Test func aPeerThatNeverAnswersMeetsTheDeadline() async {
    await #expect {
      try await OutboundHTTPSession().send(
        URLRequest(url: self.url("/hang")), timeout: .milliseconds(300))
    } throws: { error in
      if case OutboundHTTPError.deadlinePassed = error { return true }
      return false
    }
  }

  @Test func aCancelledTaskStopsItsRequest() async throws {
    let hang = url("/hang")
    let task = Task {
      try await OutboundHTTPSession().send(URLRequest(url: hang), timeout: .seconds(600))
    }
    // Cancelled once the peer holds the request, so the transfer is under way.
    while peer.seen.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
  }

  @Test func onlyTheWebsSchemesAreSpoken() async {
    await #expect(throws: OutboundHTTPError.self) {
      try await OutboundHTTPSession().send(
        URLRequest(url: URL(fileURLWithPath: "/etc/passwd")), timeout: .seconds(30))
    }
  }

  /// What crashed the server under URLSession (libdispatch trapping as sockets of refused
  /// connections were torn down): a receiver that is down, met by many requests at once.
  @Test func manyRefusedConnectionsAreErrorsAndTheClientGoesOn() async throws {
    let closed = try RefusingPort()
    let port = closed.port
    let session = OutboundHTTPSession()
    let refused = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<400 {
        group.addTask {
          do {
            _ = try await session.post(
              url: URL(string: "http://127.0.0.1:\(port)/hooks")!, body: Array("{}".utf8),
              headers: [], timeout: .seconds(30))
            return false
          } catch OutboundHTTPError.failed(let error as CurlError) {
            return error.couldNotConnect
          } catch {
            return false
          }
        }
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(refused == 400)
    withExtendedLifetime(closed) {}
    let answer = try await session.post(
      url: url("/echo"), body: Array("after".utf8), headers: [], timeout: .seconds(30))
    #expect(answer.body == Array("after".utf8))
  }
}
