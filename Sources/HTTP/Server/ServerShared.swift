import StorekeeperLogging
import Synchronization

/// What all event loops of one server share: configuration, routes, and the counters behind
/// the global limits.
final class ServerShared: Sendable {
  let configuration: ServerConfiguration
  let router: Router
  let logger: Logger
  let observer: (any RequestObserver)?
  /// The timeouts as nanoseconds, converted once: every request sets a deadline, and
  /// `Duration.components` is not free.
  let idleTimeoutNs: UInt64
  let headTimeoutNs: UInt64
  let bodyRateGracePeriodNs: UInt64
  private let connections = Atomic<Int>(0)
  private let inFlight = Atomic<Int>(0)
  /// Body bytes held beyond each body's free part (`ServerConfiguration.maxBufferedBodyBytes`).
  private let bodyBytes = Atomic<Int>(0)
  /// The most bytes one streamed body ever had queued and unsent at once (see `StreamChannel`).
  let streamBufferPeak = Atomic<Int>(0)

  init(
    configuration: ServerConfiguration, router: Router, logger: Logger,
    observer: (any RequestObserver)?
  ) {
    self.configuration = configuration
    self.router = router
    self.logger = logger
    self.observer = observer
    idleTimeoutNs = configuration.idleTimeout.nanoseconds
    headTimeoutNs = configuration.headTimeout.nanoseconds
    bodyRateGracePeriodNs = configuration.bodyRateGracePeriod.nanoseconds
  }

  /// The route for a request. Called here, on the class, the router is borrowed in place;
  /// called as `shared.router.resolve` from a loop, it was copied per request (a retain and a
  /// release of each of its tables, shared by every loop thread).
  func resolve(_ method: HTTPMethod, path: String, target: String) -> Router.Resolution {
    router.resolve(method, path: path, target: target)
  }

  func acquireConnection() -> Bool {
    acquire(connections, limit: configuration.maxConnections)
  }

  func releaseConnection() { connections.subtract(1, ordering: .relaxed) }

  func acquireInFlight() -> Bool { acquire(inFlight, limit: configuration.maxInFlightRequests) }

  func releaseInFlight() { inFlight.subtract(1, ordering: .relaxed) }

  /// Takes `bytes` more of the shared body budget, or nothing and false when they do not fit.
  func acquireBodyBytes(_ bytes: Int) -> Bool {
    acquire(bodyBytes, bytes, limit: configuration.maxBufferedBodyBytes)
  }

  func releaseBodyBytes(_ bytes: Int) { bodyBytes.subtract(bytes, ordering: .relaxed) }

  var bufferedBodyBytes: Int { bodyBytes.load(ordering: .relaxed) }

  func noteStreamBuffered(_ bytes: Int) { streamBufferPeak.max(bytes, ordering: .relaxed) }

  private func acquire(_ counter: borrowing Atomic<Int>, _ amount: Int = 1, limit: Int) -> Bool {
    let now = counter.add(amount, ordering: .relaxed).newValue
    if now > limit {
      counter.subtract(amount, ordering: .relaxed)
      return false
    }
    return true
  }
}
