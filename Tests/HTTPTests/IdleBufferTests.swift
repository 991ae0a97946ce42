import CSystem
import StorekeeperLogging
import Testing

@testable import HTTP

#if canImport(Glibc)
  import Glibc
#endif

/// A connection left idle after a large answer or body keeps only a few KiB of buffers: an
/// audit held ~200 KiB per idle connection (two pipelined `GET /openapi.yaml`, then silence),
/// 400 MB for 2,000 of them, with no credential and outside every limit.
///
/// The loop is driven step by step on the test's thread (no `run()`), so what the connection
/// holds is read where the loop would read it, and nothing depends on timing.
@Suite struct IdleBufferTests {
  static let answerBytes = 150_000

  static func router() -> Router {
    var router = Router()
    let big = [UInt8](repeating: 0x61, count: answerBytes)
    router.addImmediate(.get, "/big") { _, _ in Response(body: big) }
    router.addImmediate(.post, "/size") { request, _ in Response.text("\(request.body.count)") }
    router.addImmediate(.get, "/hello") { _, _ in Response.text("hello") }
    return router
  }

  /// One loop, not running, and a client connected to it.
  final class Harness {
    let loop: EventLoop
    let client: TestClient
    let connection: Connection
    var received: [UInt8] = []

    init() throws {
      var configuration = ServerConfiguration()
      configuration.port = 0
      let shared = ServerShared(
        configuration: configuration, router: IdleBufferTests.router(),
        logger: Logger(label: "test", level: .warning), observer: nil)
      let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
      loop = try EventLoop(shared: shared, listener: listener) {}
      loop.now = csys_monotonic_ns()
      client = try TestClient(port: listener.port)
      var accepted: Connection?
      for _ in 0..<500 where accepted == nil {
        loop.acceptConnections()
        accepted = loop.connections.lazy.compactMap { $0 }.first
        if accepted == nil { pause(milliseconds: 2) }
      }
      guard let accepted else { throw TestClient.ClientError(description: "never accepted") }
      connection = accepted
    }

    deinit { loop.closeAll() }

    /// Lets the loop read, answer and write, and the client read, until what the client
    /// holds ends with `suffix`.
    func exchange(untilEndsWith suffix: String) throws {
      let tail = Array(suffix.utf8)
      for _ in 0..<5_000 where !received.reversed().starts(with: tail.reversed()) {
        loop.now = csys_monotonic_ns()
        loop.handle(connection, events: Epoll.readable | Epoll.writable)
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes {
          recv(client.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if n > 0 {
          received += chunk[0..<n]
        } else {
          pause(milliseconds: 1)
        }
      }
      guard received.reversed().starts(with: tail.reversed()) else {
        throw TestClient.ClientError(description: "no answer ending in \(suffix)")
      }
    }

    /// Idle as the loop's admission counts it: nothing of a request, nothing to send.
    var isIdle: Bool {
      connection.phase == .idle && connection.parser.bufferedByteCount == 0
        && !connection.hasPendingOutput && loop.connections[Int(connection.fd)] === connection
    }
  }

  @Test func aPipelinedLargeAnswerLeavesNoLargeOutputBufferOnceIdle() async throws {
    try await offPool {
      let harness = try Harness()
      // The first answer is queued on the connection (a request waits behind it).
      try harness.client.send(get("/big") + get("/big") + get("/hello"))
      try harness.exchange(untilEndsWith: "hello")
      #expect(harness.received.count > 2 * Self.answerBytes)
      #expect(harness.isIdle)
      #expect(harness.connection.output.capacity <= Connection.retainedBufferBytes)
      #expect(harness.connection.parser.storageCapacity <= Connection.retainedBufferBytes)
      // What comes next is still served.
      harness.received = []
      try harness.client.send(get("/hello"))
      try harness.exchange(untilEndsWith: "hello")
    }
  }

  @Test func aLargeBodyLeavesNoLargeParseBufferOnceIdle() async throws {
    try await offPool {
      let harness = try Harness()
      let body = [UInt8](repeating: 0x62, count: 60_000)
      try harness.client.send(
        Array("POST /size HTTP/1.1\r\nHost: test\r\nContent-Length: 60000\r\n\r\n".utf8) + body)
      try harness.exchange(untilEndsWith: "60000")
      #expect(harness.isIdle)
      #expect(harness.connection.parser.storageCapacity <= Connection.retainedBufferBytes)
      #expect(harness.connection.output.capacity <= Connection.retainedBufferBytes)
    }
  }
}
