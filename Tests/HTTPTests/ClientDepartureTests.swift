import Synchronization
import Testing

@testable import HTTP

/// A client that closes its connection while its request is in flight has the handler's task
/// cancelled: work nobody will read the answer of stops (a report queued for verification
/// leaves the queue).
@Suite struct ClientDepartureTests {
  final class Outcome: Sendable {
    private let value = Mutex<String?>(nil)
    func set(_ text: String) { value.withLock { $0 = text } }
    var text: String? { value.withLock { $0 } }
  }

  static func router(outcome: Outcome) -> Router {
    var router = liveRouter()
    for placement in [HandlerPlacement.taskPool, .eventLoop] {
      let path = placement == .taskPool ? "/wait-pool" : "/wait-loop"
      router.add(.get, path, placement: placement) { _, _ in
        outcome.set("started")
        do {
          try await Task.sleep(for: .seconds(30))
          outcome.set("finished")
        } catch {
          outcome.set("cancelled")
        }
        return Response.text("done")
      }
    }
    return router
  }

  @Test(arguments: ["/wait-pool", "/wait-loop"])
  func closingTheConnectionCancelsTheHandler(_ path: String) async throws {
    let outcome = Outcome()
    try await withServer(router: Self.router(outcome: outcome)) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        try client.send(get(path))
        for _ in 0..<3000 where outcome.text == nil { pause(milliseconds: 10) }
        client.close()
        // A bound on waiting, not a timing: a loaded machine may take long to run the cancelled task.
        for _ in 0..<3000 where outcome.text == "started" { pause(milliseconds: 10) }
      }
      #expect(outcome.text == "cancelled")
    }
  }

  @Test func aClientStillConnectedIsAnswered() async throws {
    var router = liveRouter()
    router.add(.get, "/short") { _, _ in
      try await Task.sleep(for: .milliseconds(50))
      return Response.text(Task.isCancelled ? "cancelled" : "finished")
    }
    try await withServer(router: router) { port, _ in
      let text = try await offPool { () -> String in
        let client = try TestClient(port: port)
        try client.send(get("/short"))
        return try client.readResponse().text
      }
      #expect(text == "finished")
    }
  }
}
