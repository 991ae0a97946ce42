import Testing

@testable import HTTP

/// The bytes of request bodies held at once are bounded across connections: past each body's
/// free part they come from one budget, a body that does not fit is refused (503, closed), and
/// an answer or a close gives the budget back. Small bodies are admitted whatever large ones
/// hold.
@Suite struct BodyBudgetTests {
  private static let budget = 100_000
  private static let free = 1_000

  private func configure(_ configuration: inout ServerConfiguration) {
    configuration.maxBufferedBodyBytes = Self.budget
    configuration.bodyBytesAlwaysHeld = Self.free
  }

  @Test func aBodyPastTheBudgetIsRefusedWhileSmallOnesGoOn() async throws {
    try await withServer(configure) { port, server in
      try await offPool {
        // A nearly complete body, stalled: it holds 49,000 bytes of the budget.
        let holder = try TestClient(port: port)
        try holder.send(Self.postHead(length: 60_000) + [UInt8](repeating: 0x61, count: 50_000))
        try Self.waitFor(server, toHold: 49_000)

        let refused = try TestClient(port: port)
        try refused.send(Self.postHead(length: 60_000) + [UInt8](repeating: 0x62, count: 60_000))
        let reply = try refused.readResponse()
        #expect(reply.status == 503)
        let code = reply.text.contains("\"code\":\"overloaded\"")
        #expect(code)
        #expect(reply.header("Retry-After") == "1")
        #expect(try refused.isClosedByServer())
        #expect(server.bufferedBodyBytes == 49_000)

        // A body within the free part never waits for the budget.
        let small = try TestClient(port: port)
        try small.send(
          Self.postHead(length: Self.free) + [UInt8](repeating: 0x63, count: Self.free))
        let echoed = try small.readResponse()
        #expect(echoed.status == 200)
        #expect(echoed.body.count == Self.free)

        // The holder's answer gives its bytes back: the refused body now fits.
        try holder.send([UInt8](repeating: 0x61, count: 10_000))
        let held = try holder.readResponse()
        #expect(held.status == 200)
        let whole = held.body == [UInt8](repeating: 0x61, count: 60_000)
        #expect(whole)
        #expect(server.bufferedBodyBytes == 0)
        let retried = try TestClient(port: port)
        try retried.send(Self.postHead(length: 99_000) + [UInt8](repeating: 0x62, count: 99_000))
        #expect(try retried.readResponse().status == 200)
      }
    }
  }

  @Test func aClientThatLeavesMidBodyGivesTheBudgetBack() async throws {
    try await withServer(configure) { port, server in
      try await offPool {
        let leaver = try TestClient(port: port)
        try leaver.send(Self.postHead(length: 95_000) + [UInt8](repeating: 0x61, count: 90_000))
        try Self.waitFor(server, toHold: 89_000)
        leaver.close()
        for _ in 0..<3000 where server.bufferedBodyBytes > 0 { pause(milliseconds: 10) }
        #expect(server.bufferedBodyBytes == 0)

        let next = try TestClient(port: port)
        try next.send(Self.postHead(length: 95_000) + [UInt8](repeating: 0x62, count: 95_000))
        #expect(try next.readResponse().status == 200)
      }
    }
  }

  @Test func aChunkedBodyIsChargedAsItArrives() async throws {
    try await withServer(configure) { port, server in
      try await offPool {
        let chunk = [UInt8](repeating: 0x61, count: 0x4000)
        let client = try TestClient(port: port)
        try client.send(
          "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        // Seven chunks of 16 KiB: the seventh passes the budget (114,688 - 1,000 > 100,000).
        // The server reads on after refusing (it drains before closing), so all are sent.
        for _ in 0..<7 { try client.send(Array("4000\r\n".utf8) + chunk + Array("\r\n".utf8)) }
        let status = try client.readResponse().status
        #expect(status == 503)
        #expect(try client.isClosedByServer())
        for _ in 0..<3000 where server.bufferedBodyBytes > 0 { pause(milliseconds: 10) }
        #expect(server.bufferedBodyBytes == 0)
      }
    }
  }

  private static func postHead(length: Int) -> [UInt8] {
    Array("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(length)\r\n\r\n".utf8)
  }

  private static func waitFor(_ server: HTTPServer, toHold bytes: Int) throws {
    for _ in 0..<3000 where server.bufferedBodyBytes < bytes { pause(milliseconds: 10) }
    guard server.bufferedBodyBytes == bytes else {
      throw TestClient.ClientError(
        description: "the server holds \(server.bufferedBodyBytes) body bytes, not \(bytes)")
    }
  }
}
