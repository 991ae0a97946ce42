import CSystem
import Foundation
import StorekeeperLogging
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The HTTP/1.1 server: `eventLoopCount` threads, each running an epoll loop over its own
/// listening socket (SO_REUSEPORT) and the connections accepted there. Handlers run as tasks
/// off the loop threads; immediate handlers run on them.
public final class HTTPServer: Sendable {
  private enum State {
    case idle
    case running(loops: [EventLoop], remaining: Int, waiters: [CheckedContinuation<Void, Never>])
    case stopped
  }

  private let shared: ServerShared
  private let state = Mutex(State.idle)

  /// `observer`, if given, is told of every answered request (metrics).
  public init(
    configuration: ServerConfiguration, router: Router, logger: Logger,
    observer: (any RequestObserver)? = nil
  ) {
    var router = router
    router.logger = logger
    shared = ServerShared(
      configuration: configuration, router: router, logger: logger, observer: observer)
  }

  /// Binds, starts the loops and returns the bound port (useful with port 0).
  public func start() throws -> Int {
    let configuration = shared.configuration
    // A peer closing mid-write must give EPIPE, not kill the process.
    signal(SIGPIPE, SIG_IGN)
    var loops: [EventLoop] = []
    var port = configuration.port
    try ListeningSocket.ensureFree(host: configuration.host, port: port)
    for _ in 0..<max(1, configuration.eventLoopCount) {
      let listener = try ListeningSocket(host: configuration.host, port: port)
      port = listener.port
      loops.append(
        try EventLoop(shared: shared, listener: listener) { [weak self] in self?.loopExited() })
    }
    // At the connection cap a loop with no idle connection hands a new one to a sibling.
    for loop in loops { loop.siblings = loops.filter { $0 !== loop } }
    try state.withLock { state in
      guard case .idle = state else {
        throw SystemError(call: "HTTPServer.start (already started)", errno: EINVAL)
      }
      state = .running(loops: loops, remaining: loops.count, waiters: [])
    }
    for (index, loop) in loops.enumerated() {
      let thread = Thread { loop.run(name: "http-loop-\(index)") }
      thread.name = "http-loop-\(index)"
      thread.start()
    }
    shared.logger.notice(
      "listening",
      ["host": .string(configuration.host), "port": .int(port), "event_loops": .int(loops.count)])
    return port
  }

  /// Stops accepting, lets requests under way finish within `shutdownGracePeriod`, closes
  /// every connection and returns once all loop threads have ended.
  public func shutdown() async {
    let loops: [EventLoop] = state.withLock { state in
      if case .running(let loops, _, _) = state { return loops }
      return []
    }
    let deadline = csys_monotonic_ns() + shared.configuration.shutdownGracePeriod.nanoseconds
    for loop in loops { loop.post(.shutdown(deadline: deadline)) }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let resumeNow: Bool = state.withLock { state in
        switch state {
        case .running(let loops, let remaining, var waiters):
          waiters.append(continuation)
          state = .running(loops: loops, remaining: remaining, waiters: waiters)
          return false
        case .idle, .stopped:
          return true
        }
      }
      if resumeNow { continuation.resume() }
    }
  }

  /// The most bytes a streamed body has had buffered in this server at once, across all
  /// streams so far: what `streamBufferBytes` bounds (plus one piece), observable by tests
  /// and metrics.
  public var streamBufferPeakBytes: Int { shared.streamBufferPeak.load(ordering: .relaxed) }

  /// Request-body bytes held now beyond each body's free part: what `maxBufferedBodyBytes`
  /// bounds, observable by tests and metrics.
  public var bufferedBodyBytes: Int { shared.bufferedBodyBytes }

  private func loopExited() {
    let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
      guard case .running(let loops, let remaining, let waiters) = state else { return [] }
      if remaining > 1 {
        state = .running(loops: loops, remaining: remaining - 1, waiters: waiters)
        return []
      }
      state = .stopped
      return waiters
    }
    if !waiters.isEmpty { shared.logger.notice("stopped") }
    for waiter in waiters { waiter.resume() }
  }
}
