import Testing

@testable import HTTP

/// Methods over a real socket: any token the router has no handler for on an existing path is
/// 405 with `Allow` and the connection stays usable; CONNECT's authority-form is 400 and closes.
@Suite struct LiveMethodTests {
  @Test func anyMethodWithoutAHandlerIs405WithAllowAndKeepsTheConnection() async throws {
    try await withServer { port, _ in
      try await offPool {
        let client = try TestClient(port: port, timeoutSeconds: 5)
        for method in ["TRACE", "CONNECT", "FOO", "get", "OPTIONS"] {
          try client.send("\(method) /hello HTTP/1.1\r\nHost: t\r\n\r\n")
          let reply = try client.readResponse()
          #expect(reply.status == 405, "\(method)")
          #expect(reply.header("Allow") == "GET, HEAD", "\(method)")
          #expect(reply.header("Content-Type") == "application/problem+json", "\(method)")
        }
        // A body sent with one is read and skipped, not taken for the next request.
        try client.send("TRACE /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nGET ")
        let echo = try client.readResponse()
        #expect(echo.status == 405)
        #expect(echo.header("Allow") == "POST")
        try client.send("FOO /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 404)
        try client.send(get("/hello"))
        #expect(try client.readResponse().text == "hello")
      }
    }
  }

  @Test func connectToAnAuthorityIs400AndCloses() async throws {
    try await withServer({ $0.headTimeout = .seconds(60) }) { port, _ in
      try await offPool {
        let client = try TestClient(port: port, timeoutSeconds: 5)
        try client.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        let reply = try client.readResponse()
        #expect(reply.status == 400)
        #expect(reply.header("Content-Type") == "application/problem+json")
        #expect(try client.isClosedByServer())
      }
    }
  }
}
