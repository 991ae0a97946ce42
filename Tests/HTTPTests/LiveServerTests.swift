import Testing

@testable import HTTP

@Suite struct LiveServerTests {
  @Test func servesSeveralRequestsOnOneKeepAliveConnection() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        for path in ["/hello", "/async", "/hello"] {
          try client.send(get(path))
          let reply = try client.readResponse()
          #expect(reply.status == 200)
          #expect(reply.header("Connection") == nil)
          #expect(reply.header("Date") != nil)
          #expect(reply.header("X-Request-Id") != nil)
        }
      }
    }
  }

  @Test func answersPipelinedRequestsInOrder() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(
          get("/async") + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\necho"
            + get("/hello"))
        #expect(try client.readResponse().text == "async")
        #expect(try client.readResponse().text == "echo")
        #expect(try client.readResponse().text == "hello")
      }
    }
  }

  @Test func http10ClosesUnlessKeepAliveWasAsked() async throws {
    try await withServer { port, _ in
      try await offPool {
        let plain = try TestClient(port: port)
        try plain.send("GET /hello HTTP/1.0\r\n\r\n")
        let reply = try plain.readResponse()
        #expect(reply.status == 200)
        #expect(reply.header("Connection") == "close")
        #expect(try plain.isClosedByServer())

        let kept = try TestClient(port: port)
        try kept.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try kept.readResponse().header("Connection") == "keep-alive")
        try kept.send("GET /async HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try kept.readResponse().text == "async")
      }
    }
  }

  @Test func honoursConnectionCloseFromClientAndHandler() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(get("/hello", extra: "Connection: close\r\n"))
        #expect(try client.readResponse().header("Connection") == "close")
        #expect(try client.isClosedByServer())

        let other = try TestClient(port: port)
        try other.send(get("/bye"))
        let reply = try other.readResponse()
        #expect(reply.text == "bye")
        #expect(reply.header("Connection") == "close")
        #expect(try other.isClosedByServer())
      }
    }
  }

  @Test func answersEveryPipelinedRequestSentBeforeTheClientHalfClosed() async throws {
    let gate = Gate()
    try await withServer(router: liveRouter(gate: gate)) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(get("/slow") + get("/async") + get("/hello"))
        client.shutdownWrite()
        try gate.waitForArrivals(1)
        // The end of the client's stream reaches the server while the first is in flight.
        pause(milliseconds: 100)
        gate.open()
        #expect(try client.readResponse().text == "slow done")
        #expect(try client.readResponse().text == "async")
        let last = try client.readResponse()
        #expect(last.text == "hello")
        #expect(last.header("Connection") == "close")
        #expect(try client.isClosedByServer())
      }
    }
  }

  @Test func headKeepsContentLengthButSendsNoBody() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n" + get("/async"))
        let head = try client.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "5")
        #expect(try client.readResponse().text == "async")
      }
    }
  }

  @Test func decodesAChunkedUpload() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(
          "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n"
        )
        #expect(try client.readResponse().text == "abcde")
      }
    }
  }

  @Test func sends100ContinueBeforeReadingTheBody() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(
          "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("hello")
        let reply = try client.readResponse()
        #expect(reply.status == 200)
        #expect(reply.text == "hello")
      }
    }
  }

  @Test func rejectsAnOversizedBodyWithoutWaitingForIt() async throws {
    try await withServer({ $0.maxBodyBytes = 1024 }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(
          "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 10000000\r\n\r\n"
        )
        let reply = try client.readResponse()
        #expect(reply.status == 413)
        #expect(reply.header("Content-Type") == "application/problem+json")
        #expect(reply.header("Connection") == "close")
        #expect(try client.isClosedByServer())
      }
    }
  }

  @Test func answersASlowlorisHeadWith408() async throws {
    try await withServer({ $0.headTimeout = .milliseconds(300) }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        // Each line comes well within the timeout of the previous one; the whole head does not.
        try client.send("GET /hello HTTP/1.1\r\n")
        for i in 0..<8 {
          pause(milliseconds: 100)
          try? client.send("X-Drip-\(i): 1\r\n")
        }
        let reply = try client.readResponse()
        #expect(reply.status == 408)
        #expect(try client.isClosedByServer())
      }
    }
  }

  @Test func theHeadTimeoutStartsWithTheHeadNotWithAnEmptyLineBeforeIt() async throws {
    // Seconds of margin each way: a loaded machine may stall the client or the server's timer.
    try await withServer({ $0.headTimeout = .seconds(3) }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        // RFC 9112 §2.2: some clients send a CRLF after a POST body; it is no request.
        try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi\r\n")
        #expect(try client.readResponse().text == "hi")
        // Well past a head timeout that would have started with the CRLF.
        pause(milliseconds: 5500)
        try client.send("GET /hello HTTP/1.1\r\n")
        pause(milliseconds: 100)
        try client.send("Host: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
      }
    }
  }

  @Test func answersATLSClientHelloWith400AtOnce() async throws {
    // With a head timeout this long, only the parser's own verdict can answer within the
    // client's few seconds.
    try await withServer({ $0.headTimeout = .seconds(60) }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port, timeoutSeconds: 5)
        // A TLS 1.2 ClientHello's record and handshake headers, then the client version.
        try client.send([0x16, 0x03, 0x01, 0x00, 0xC8, 0x01, 0x00, 0x00, 0xC4, 0x03, 0x03])
        let reply = try client.readResponse()
        #expect(reply.status == 400)
        #expect(reply.header("Content-Type") == "application/problem+json")
        #expect(reply.header("Connection") == "close")
        #expect(try client.isClosedByServer())
      }
    }
  }

  @Test func answersATooSlowBodyWith408() async throws {
    try await withServer({
      $0.minBodyBytesPerSecond = 1_000_000
      $0.bodyRateGracePeriod = .milliseconds(200)
    }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nx")
        #expect(try client.readResponse().status == 408)
        #expect(try client.isClosedByServer())
      }
    }
  }

  @Test func aPipelinedBodyGetsItsOwnGracePeriod() async throws {
    // Every deadline below is at least 2.5 s from the moment that must fall on its side of it,
    // so a loaded machine stalling the client or the server's timer changes nothing.
    try await withServer({ $0.bodyRateGracePeriod = .seconds(8) }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        // The first request's body arrives in two parts, so its rate deadline is set (t = 8 s);
        // it completes at t = 5 s, and its immediate answer (405) comes with the second
        // request's head, whose body starts then (its own deadline: t = 13 s).
        try client.send("POST /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nab")
        pause(milliseconds: 5000)
        try client.send("cd" + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nx")
        #expect(try client.readResponse().status == 405)
        // Past the first body's deadline, within the second's own grace period (t = 10.5 s).
        pause(milliseconds: 5500)
        try client.send("ello")
        let reply = try client.readResponse()
        #expect(reply.status == 200)
        #expect(reply.text == "xello")
      }
    }
  }

  @Test func closesAnIdleKeepAliveConnectionSilently() async throws {
    try await withServer({ $0.idleTimeout = .milliseconds(200) }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(get("/hello"))
        #expect(try client.readResponse().status == 200)
        #expect(try client.isClosedByServer())
      }
    }
  }

  @Test func answers503WhenTooManyHandlersAreInFlight() async throws {
    let gate = Gate()
    try await withServer(router: liveRouter(gate: gate), { $0.maxInFlightRequests = 1 }) {
      port, _ in
      try await offPool {
        let busy = try TestClient(port: port)
        try busy.send(get("/slow"))
        try gate.waitForArrivals(1)
        let refused = try TestClient(port: port)
        try refused.send(get("/slow"))
        let reply = try refused.readResponse()
        #expect(reply.status == 503)
        #expect(reply.header("Retry-After") == "1")
        // Immediate handlers do not count against the limit.
        try refused.send(get("/hello"))
        #expect(try refused.readResponse().status == 200)
        gate.open()
        #expect(try busy.readResponse().text == "slow done")
      }
    }
  }

  @Test func shutdownFinishesInFlightRequestsAndRefusesNewConnections() async throws {
    let gate = Gate()
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.eventLoopCount = 2
    // Far longer than the test takes even on a loaded machine: the in-flight request must be
    // finished by the drain, not cut off by the grace period's end.
    configuration.shutdownGracePeriod = .seconds(120)
    let server = HTTPServer(
      configuration: configuration, router: liveRouter(gate: gate),
      logger: .init(label: "t", level: .warning))
    let port = try server.start()
    let client = try await offPool { () -> TestClient in
      let client = try TestClient(port: port)
      try client.send(get("/slow"))
      try gate.waitForArrivals(1)
      return client
    }
    let idle = try await offPool { () -> TestClient in
      let idle = try TestClient(port: port)
      try idle.send(get("/hello"))
      _ = try idle.readResponse()
      return idle
    }
    let stopping = Task { await server.shutdown() }
    let refused = try await offPool { () -> Bool in
      for _ in 0..<500 {
        if (try? TestClient(port: port)) == nil { return true }
        pause(milliseconds: 10)
      }
      return false
    }
    #expect(refused)
    #expect(try await offPool { try idle.isClosedByServer() })
    gate.open()
    let reply = try await offPool { try client.readResponse() }
    #expect(reply.status == 200)
    #expect(reply.text == "slow done")
    #expect(reply.header("Connection") == "close")
    await stopping.value
  }
}
