import Testing

@testable import HTTP

#if canImport(Glibc)
  import Glibc
#endif

/// Admission at the connection cap: idle keep-alive connections make room for new clients,
/// busy ones never do, and 503 comes only when every connection is busy.
@Suite struct ConnectionCapTests {
  @Test func closesTheLongestIdleConnectionToAdmitANewClient() async throws {
    try await withServer({
      $0.maxConnections = 3
      $0.eventLoopCount = 1
    }) { port, _ in
      try await offPool {
        let a = try TestClient(port: port)
        let b = try TestClient(port: port)
        let c = try TestClient(port: port)
        for client in [a, b, c, a] { try expectHello(client) }
        // a answered last, so b has been idle longest.
        let d = try TestClient(port: port)
        try expectHello(d)
        #expect(try b.endOfStream() == .cleanClose)
        for client in [a, c, d] { try expectHello(client) }
      }
    }
  }

  @Test func aNewConnectionThatSentNothingCountsAsIdle() async throws {
    try await withServer({
      $0.maxConnections = 1
      $0.eventLoopCount = 1
    }) { port, _ in
      try await offPool {
        let silent = try TestClient(port: port)
        let next = try TestClient(port: port)
        try expectHello(next)
        #expect(try silent.endOfStream() == .cleanClose)
      }
    }
  }

  @Test func answers503WhenEveryConnectionIsMidRequest() async throws {
    try await withServer({ $0.maxConnections = 2 }) { port, _ in
      try await offPool {
        // One request each first, so both are surely accepted; then a head left unfinished,
        // as a slow client sends it.
        let slow = try (0..<2).map { _ in try TestClient(port: port) }
        for client in slow {
          try expectHello(client)
          try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n")
        }
        let refused = try TestClient(port: port)
        let reply = try refused.readResponse()
        #expect(reply.status == 503)
        #expect(reply.text.contains("too_many_connections"))
        #expect(reply.header("Retry-After") != nil)
        #expect(try refused.isClosedByServer())
        // The slow clients were not disturbed: their requests complete.
        for client in slow {
          try client.send("\r\n")
          #expect(try client.readResponse().status == 200)
        }
      }
    }
  }

  @Test func neverClosesAConnectionWithARequestInFlight() async throws {
    let gate = Gate()
    try await withServer(router: liveRouter(gate: gate), { $0.maxConnections = 2 }) {
      port, _ in
      try await offPool {
        let busy = try TestClient(port: port)
        try busy.send(get("/slow"))
        try gate.waitForArrivals(1)
        var previous = try TestClient(port: port)
        try expectHello(previous)
        // With two loops a new connection may land on the loop holding only the busy one; the
        // idle one is then closed by its own loop. Several rounds take both paths.
        for _ in 0..<8 {
          let next = try TestClient(port: port)
          try expectHello(next)
          #expect(try previous.endOfStream() == .cleanClose)
          previous = next
        }
        gate.open()
        #expect(try busy.readResponse().text == "slow done")
        try expectHello(busy)
      }
    }
  }

  private func expectHello(_ client: TestClient) throws {
    try client.send(get("/hello"))
    let reply = try client.readResponse()
    #expect(reply.status == 200)
    #expect(reply.text == "hello")
  }
}

extension TestClient {
  enum EndOfStream: Equatable {
    case cleanClose, reset, moreData, stillOpen
  }

  /// How the server ended the stream, once every response was read: an orderly close (FIN)
  /// or a reset, which could have destroyed a response.
  func endOfStream() throws -> EndOfStream {
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, 0)
    if n == 0 { return .cleanClose }
    if n > 0 { return .moreData }
    return errno == EAGAIN || errno == EWOULDBLOCK ? .stillOpen : .reset
  }
}
