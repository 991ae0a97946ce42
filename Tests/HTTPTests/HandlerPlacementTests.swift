import StorekeeperLogging
import Synchronization
import Testing

@testable import HTTP

/// Async handlers placed on the event loop: they run on the loop's thread, never stall it
/// while they wait, and still finish when they outlive the loop.
@Suite struct HandlerPlacementTests {
  final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
  }

  /// The loop threads name themselves `http-loop-N`.
  static func threadName() -> String { currentThreadName() }

  static func router(gate: Gate, finished: Flag = Flag()) -> Router {
    var router = liveRouter(gate: gate)
    router.add(.get, "/where-loop", placement: .eventLoop) { _, _ in
      // Across an await too: the continuation comes back to the loop.
      let before = threadName()
      try await Task.sleep(for: .milliseconds(5))
      return Response.text(before + " " + threadName())
    }
    router.add(.get, "/where-pool") { _, _ in Response.text(threadName()) }
    router.add(.get, "/slow-loop", placement: .eventLoop) { _, _ in
      await gate.wait()
      finished.set()
      return Response.text("slow loop done")
    }
    return router
  }

  @Test func aLoopPlacedHandlerRunsOnTheLoopThreadAndAPoolOneDoesNot() async throws {
    try await withServer(router: Self.router(gate: Gate())) { port, _ in
      let (loop, pool) = try await offPool { () -> (String, String) in
        let client = try TestClient(port: port)
        try client.send(get("/where-loop"))
        let loop = try client.readResponse().text
        try client.send(get("/where-pool"))
        return (loop, try client.readResponse().text)
      }
      let names = loop.split(separator: " ").map(String.init)
      #expect(names.count == 2)
      #expect(names.allSatisfy { $0.hasPrefix("http-loop-") }, "\(loop)")
      #expect(!pool.hasPrefix("http-loop-"), "\(pool)")
    }
  }

  @Test func aWaitingLoopPlacedHandlerDoesNotStallItsLoop() async throws {
    let gate = Gate()
    try await withServer(router: Self.router(gate: gate), { $0.eventLoopCount = 1 }) { port, _ in
      let slow = try await offPool { () -> TestClient in
        let client = try TestClient(port: port)
        try client.send(get("/slow-loop"))
        try gate.waitForArrivals(1)
        return client
      }
      // The only loop keeps serving while the handler waits.
      let others = try await offPool { () -> [Int] in
        let client = try TestClient(port: port)
        var statuses: [Int] = []
        for path in ["/hello", "/async", "/where-loop"] {
          try client.send(get(path))
          statuses.append(try client.readResponse().status)
        }
        return statuses
      }
      #expect(others == [200, 200, 200])
      gate.open()
      let reply = try await offPool { try slow.readResponse() }
      #expect(reply.text == "slow loop done")
    }
  }

  @Test func aHandlerThatOutlivesItsLoopStillFinishes() async throws {
    let gate = Gate()
    let finished = Flag()
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.eventLoopCount = 1
    configuration.shutdownGracePeriod = .milliseconds(100)
    let server = HTTPServer(
      configuration: configuration, router: Self.router(gate: gate, finished: finished),
      logger: .init(label: "t", level: .error))
    let port = try server.start()
    let client = try await offPool { () -> TestClient in
      let client = try TestClient(port: port)
      try client.send(get("/slow-loop"))
      try gate.waitForArrivals(1)
      return client
    }
    await server.shutdown()
    #expect(try await offPool { try client.isClosedByServer() })
    // The loop is gone: the handler's continuation must run on the global executor instead.
    gate.open()
    // Up to a minute on a loaded machine; done as soon as the handler has finished.
    let deadline = ContinuousClock.now + .seconds(60)
    while !finished.isSet, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(finished.isSet)
  }
}
