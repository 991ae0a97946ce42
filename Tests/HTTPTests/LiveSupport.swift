import CSystem
import Foundation
import Glibc
import StorekeeperLogging
import Synchronization

@testable import HTTP

/// Runs blocking socket code on a thread of its own: never on the cooperative pool that the
/// server's async handlers need, nor on Dispatch's global queue (CPU-wide on Linux).
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}

func pause(milliseconds: Int) { usleep(useconds_t(milliseconds * 1000)) }

/// A latch the test opens to let a handler finish.
final class Gate: Sendable {
  private struct State {
    var opened = false
    var arrived = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
  }
  private let state = Mutex(State())

  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state in
        state.arrived += 1
        if state.opened { return true }
        state.waiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  func open() {
    let waiters = state.withLock { state in
      state.opened = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  var arrived: Int { state.withLock { $0.arrived } }

  /// Blocks (off the pool) until `count` handlers are waiting.
  func waitForArrivals(_ count: Int) throws {
    for _ in 0..<3000 where arrived < count { pause(milliseconds: 10) }
    if arrived < count { throw TestClient.ClientError(description: "handler never started") }
  }
}

func liveRouter(gate: Gate = Gate()) -> Router {
  var router = Router()
  router.addImmediate(.get, "/hello") { _, _ in Response.text("hello") }
  router.add(.get, "/async") { _, _ in Response.text("async") }
  router.add(.post, "/echo") { request, _ in Response(body: request.body) }
  router.add(.get, "/slow") { _, _ in
    await gate.wait()
    return Response.text("slow done")
  }
  router.addImmediate(.get, "/bye") { _, _ in
    Response(headers: ["Connection": "close"], body: Array("bye".utf8))
  }
  return router
}

/// Starts a server on an ephemeral port for the duration of `body`.
func withServer(
  router: Router = liveRouter(), observer: (any RequestObserver)? = nil,
  _ configure: (inout ServerConfiguration) -> Void = { _ in },
  _ body: (Int, HTTPServer) async throws -> Void
) async throws {
  var configuration = ServerConfiguration()
  configuration.port = 0
  configuration.eventLoopCount = 2
  configuration.shutdownGracePeriod = .seconds(5)
  configure(&configuration)
  let server = HTTPServer(
    configuration: configuration, router: router, logger: Logger(label: "test", level: .warning),
    observer: observer)
  let port = try server.start()
  do {
    try await body(port, server)
  } catch {
    await server.shutdown()
    throw error
  }
  await server.shutdown()
}

func get(_ path: String, extra: String = "") -> String {
  "GET \(path) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}

/// The calling thread's name as the kernel knows it.
func currentThreadName() -> String {
  var buffer = [CChar](repeating: 0, count: 16)
  csys_thread_name(&buffer, buffer.count)
  return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
