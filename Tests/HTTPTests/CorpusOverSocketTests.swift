import Testing

@testable import HTTP

@Suite struct CorpusOverSocketTests {
  @Test func everyMalformedRequestGetsItsStatusAndTheServerKeepsServing() async throws {
    try await withServer({
      let limits = MalformedCorpus.limits
      $0.maxHeadBytes = limits.maxHeadBytes
      $0.maxHeaderCount = limits.maxHeaderCount
      $0.maxTargetBytes = limits.maxTargetBytes
      $0.maxBodyBytes = limits.maxBodyBytes
      // Unfinished cases are judged on size, not on time.
      $0.headTimeout = .seconds(30)
    }) { port, _ in
      try await offPool {
        for sample in MalformedCorpus.cases {
          let client = try TestClient(port: port)
          try client.send(sample.bytes)
          let reply = try client.readResponse()
          #expect(reply.status == sample.status, "\(sample.name)")
          #expect(reply.header("Content-Type") == "application/problem+json", "\(sample.name)")
          #expect(reply.header("Connection") == "close", "\(sample.name)")
          #expect(try client.isClosedByServer(), "\(sample.name)")
        }
        let healthy = try TestClient(port: port)
        try healthy.send(get("/hello"))
        let reply = try healthy.readResponse()
        #expect(reply.status == 200)
        #expect(reply.text == "hello")
      }
    }
  }
}
