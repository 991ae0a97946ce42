import Synchronization
import Testing

@testable import HTTP

#if canImport(Glibc)
  import Glibc
#endif

/// The duration the access log and the metrics hook are told includes the time a handler held
/// the event loop: the loop's clock was read once per batch, so a handler that blocked its loop
/// for 300 ms was recorded as taking 0.05 ms, and a stalled loop was invisible.
@Suite struct RequestDurationTests {
  final class Durations: RequestObserver {
    private let recorded = Mutex<[UInt64]>([])
    func requestCompleted(method: HTTPMethod, status: Int, nanoseconds: UInt64) {
      recorded.withLock { $0.append(nanoseconds) }
    }
    var values: [UInt64] { recorded.withLock { $0 } }
  }

  /// What each busy handler holds its thread for, without suspending.
  static let busyMicroseconds: UInt32 = 50_000

  static func router() -> Router {
    var router = Router()
    router.addImmediate(.get, "/busy-immediate") { _, _ in
      usleep(busyMicroseconds)
      return Response.text("done")
    }
    router.add(.get, "/busy-loop", placement: .eventLoop) { _, _ in
      usleep(busyMicroseconds)
      return Response.text("done")
    }
    router.addImmediate(.get, "/hello") { _, _ in Response.text("hello") }
    return router
  }

  @Test func handlersThatHoldTheLoopAreTimedForWhatTheyTook() async throws {
    let durations = Durations()
    try await withServer(router: Self.router(), observer: durations) { port, _ in
      try await offPool {
        let client = try TestClient(port: port)
        // One after another: each is recorded before the loop reads the next, so once
        // `/hello` is answered the two before it are recorded.
        for path in ["/busy-immediate", "/busy-loop", "/hello"] {
          try client.send(get(path))
          #expect(try client.readResponse().status == 200)
        }
      }
    }
    let values = durations.values
    #expect(values.count == 3)
    // A lower bound the handlers themselves guarantee: each slept that long.
    let busy = UInt64(Self.busyMicroseconds) * 1000
    #expect(values.prefix(2).allSatisfy { $0 >= busy }, "\(values)")
  }
}
