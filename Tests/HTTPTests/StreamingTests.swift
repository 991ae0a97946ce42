import Synchronization
import Testing

@testable import HTTP

/// Streamed bodies over real sockets: chunked framing, keep-alive and pipelining after the
/// last chunk, HEAD and HTTP/1.0, memory bounded by `streamBufferBytes` for a client that does
/// not read, and the producer stopped when its client goes or stops reading.
@Suite struct StreamingTests {
  /// What a producer saw: pieces written, and how it ended.
  final class Probe: Sendable {
    private struct State {
      var written = 0
      var ending: String?
    }
    private let state = Mutex(State())
    func wrote(_ count: Int) { state.withLock { $0.written += count } }
    func ended(_ how: String) { state.withLock { $0.ending = how } }
    var written: Int { state.withLock { $0.written } }
    var ending: String? { state.withLock { $0.ending } }

    /// Blocks (off the pool) until the producer has ended, within a generous bound.
    func waitForEnd() {
      for _ in 0..<3000 where ending == nil { pause(milliseconds: 10) }
    }
  }

  static let pieceSize = 16 * 1024

  /// Piece `index` of a stream: its number repeated, so a lost or reordered piece shows.
  static func piece(_ index: Int) -> [UInt8] {
    [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: pieceSize)
  }

  static func expected(_ count: Int) -> [UInt8] { (0..<count).flatMap(piece) }

  static func router(probe: Probe) -> Router {
    var router = liveRouter()
    router.add(.get, "/stream/{count}") { _, context in
      let count = Int(context.parameters["count"] ?? "") ?? 0
      return Response(
        headers: ["Content-Type": "application/octet-stream"],
        stream: BodyStream { writer in
          do {
            for index in 0..<count {
              try await writer.write(piece(index))
              probe.wrote(1)
            }
            probe.ended("finished")
          } catch {
            probe.ended("cancelled")
            throw error
          }
        })
    }
    router.add(.get, "/endless") { _, _ in
      Response(
        stream: BodyStream { writer in
          var index = 0
          do {
            while true {
              try await writer.write(piece(index))
              probe.wrote(1)
              index += 1
            }
          } catch {
            probe.ended("cancelled")
            throw error
          }
        })
    }
    router.add(.get, "/fails") { _, _ in
      Response(
        stream: BodyStream { writer in
          try await writer.write(piece(0))
          probe.ended("threw")
          throw HTTPError(500, code: "export_failed")
        })
    }
    router.addImmediate(.get, "/immediate-stream") { _, _ in
      Response(stream: BodyStream { writer in try await writer.write(piece(0)) })
    }
    return router
  }

  @Test func aChunkedBodyArrivesWholeAndTheConnectionStaysOpen() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let (head, body, next) = try await offPool {
        () -> (TestClient.Reply, TestClient.ChunkedBody, TestClient.Reply) in
        let client = try TestClient(port: port)
        try client.send(get("/stream/40"))
        let head = try client.readResponse()
        let body = try client.readChunkedBody()
        try client.send(get("/hello"))
        return (head, body, try client.readResponse())
      }
      #expect(head.status == 200)
      #expect(head.header("Transfer-Encoding") == "chunked")
      #expect(head.header("Content-Length") == nil)
      #expect(head.header("Content-Type") == "application/octet-stream")
      #expect(body.complete)
      #expect(body.bytes == Self.expected(40))
      #expect(next.status == 200 && next.text == "hello")
    }
  }

  @Test func pipelinedRequestsAreAnsweredInOrderAfterTheLastChunk() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let (first, second, third) = try await offPool {
        () -> (TestClient.ChunkedBody, TestClient.Reply, TestClient.ChunkedBody) in
        let client = try TestClient(port: port)
        try client.send(get("/stream/5") + get("/hello") + get("/stream/3"))
        _ = try client.readResponse()
        let first = try client.readChunkedBody()
        let second = try client.readResponse()
        _ = try client.readResponse()
        return (first, second, try client.readChunkedBody())
      }
      #expect(first.complete && first.bytes == Self.expected(5))
      #expect(second.text == "hello")
      #expect(third.complete && third.bytes == Self.expected(3))
    }
  }

  @Test func headGetsTheHeadAndNoBodyAndTheProducerNeverRuns() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let (head, next) = try await offPool { () -> (TestClient.Reply, TestClient.Reply) in
        let client = try TestClient(port: port)
        try client.send("HEAD /stream/10 HTTP/1.1\r\nHost: test\r\n\r\n")
        let head = try client.readResponse(head: true)
        try client.send(get("/hello"))
        return (head, try client.readResponse())
      }
      #expect(head.status == 200)
      #expect(head.header("Transfer-Encoding") == "chunked")
      #expect(next.text == "hello")
      #expect(probe.written == 0 && probe.ending == nil)
    }
  }

  @Test func anHTTP10ClientIsRefusedAStream() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let reply = try await offPool { () -> TestClient.Reply in
        let client = try TestClient(port: port)
        try client.send("GET /stream/10 HTTP/1.0\r\n\r\n")
        return try client.readResponse()
      }
      #expect(reply.status == 505)
      #expect(reply.text.contains("http_version_not_supported"))
      #expect(probe.written == 0)
    }
  }

  /// HEAD answers what GET would: never `Transfer-Encoding` to an HTTP/1.0 client.
  @Test func anHTTP10HeadOfAStreamIsRefusedAsItsGetIs() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let reply = try await offPool { () -> TestClient.Reply in
        let client = try TestClient(port: port)
        try client.send("HEAD /stream/10 HTTP/1.0\r\n\r\n")
        return try client.readResponse(head: true)
      }
      #expect(reply.status == 505)
      #expect(reply.header("Transfer-Encoding") == nil)
      #expect(probe.written == 0)
    }
  }

  /// The client reads nothing until the server's buffer for the stream is full (the kernel's
  /// buffers on both sides are full by then), then everything: the server never held more
  /// than the bound plus one piece, though the body is many times that.
  @Test func aClientThatDoesNotReadKeepsTheServersBufferBounded() async throws {
    let probe = Probe()
    let bound = 64 * 1024
    let pieces = 1024  // 16 MiB
    try await withServer(
      router: Self.router(probe: probe), { $0.streamBufferBytes = bound }
    ) { port, server in
      let body = try await offPool { () -> TestClient.ChunkedBody in
        let client = try TestClient(port: port)
        client.shrinkReceiveBuffer(to: 16 * 1024)
        try client.send(get("/stream/\(pieces)"))
        for _ in 0..<3000 where server.streamBufferPeakBytes < bound { pause(milliseconds: 10) }
        _ = try client.readResponse()
        return try client.readChunkedBody()
      }
      #expect(server.streamBufferPeakBytes >= bound)
      // The bound, the piece that went over it, and the head and chunk framing around them.
      #expect(server.streamBufferPeakBytes <= bound + Self.pieceSize + 1024)
      #expect(body.complete)
      #expect(body.bytes.count == pieces * Self.pieceSize)
      #expect(body.bytes == Self.expected(pieces))
    }
  }

  @Test func aClientThatDisconnectsMidStreamStopsTheProducer() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let next = try await offPool { () -> TestClient.Reply in
        let client = try TestClient(port: port)
        try client.send(get("/endless"))
        _ = try client.readResponse()
        _ = try client.fill()
        client.close()
        probe.waitForEnd()
        let other = try TestClient(port: port)
        try other.send(get("/hello"))
        return try other.readResponse()
      }
      #expect(probe.ending == "cancelled")
      #expect(next.text == "hello")
    }
  }

  @Test func aClientThatStopsReadingIsClosedAtTheWriteTimeout() async throws {
    let probe = Probe()
    try await withServer(
      router: Self.router(probe: probe), { $0.idleTimeout = .milliseconds(500) }
    ) { port, _ in
      let closed = try await offPool { () -> Bool in
        let client = try TestClient(port: port)
        client.shrinkReceiveBuffer(to: 16 * 1024)
        try client.send(get("/endless"))
        probe.waitForEnd()
        // Whatever was in flight, then the end of the stream (or a reset).
        while try client.fill() {}
        return true
      }
      #expect(probe.ending == "cancelled")
      #expect(closed)
    }
  }

  @Test func aProducerThatFailsCutsTheBodyShort() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let (head, body) = try await offPool { () -> (TestClient.Reply, TestClient.ChunkedBody) in
        let client = try TestClient(port: port)
        try client.send(get("/fails"))
        let head = try client.readResponse()
        return (head, try client.readChunkedBody())
      }
      #expect(head.status == 200)
      #expect(!body.complete)
      #expect(body.bytes == Self.piece(0))
    }
  }

  @Test func anImmediateHandlerCannotStreamAndTheConnectionGoesOn() async throws {
    let probe = Probe()
    try await withServer(router: Self.router(probe: probe)) { port, _ in
      let (refused, next) = try await offPool { () -> (TestClient.Reply, TestClient.Reply) in
        let client = try TestClient(port: port)
        try client.send(get("/immediate-stream"))
        let refused = try client.readResponse()
        try client.send(get("/hello"))
        return (refused, try client.readResponse())
      }
      #expect(refused.status == 500)
      #expect(refused.header("Transfer-Encoding") == nil)
      #expect(next.text == "hello")
    }
  }

  @Test func inProcessHandlingCollectsTheStream() async throws {
    let probe = Probe()
    let response = await Self.router(probe: probe).handle(
      Request(method: .get, target: "/stream/3"))
    #expect(response.status == 200)
    #expect(response.body == Self.expected(3))
  }
}
