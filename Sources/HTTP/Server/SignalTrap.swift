import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Catches SIGTERM/SIGINT from the moment it is made, so a signal sent right after the
/// readiness line is never lost: make it before announcing readiness, wait on it after.
public final class SignalTrap: Sendable {
  private struct State: @unchecked Sendable {
    // DispatchSource objects are thread-safe; they are only retained and cancelled here.
    var caught: Int32?
    var waiters: [CheckedContinuation<Int32, Never>] = []
    var sources: [any DispatchSourceSignal] = []
  }

  private let state = Mutex(State())

  public init(_ signals: [Int32]) {
    for number in signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { [weak self] in self?.fire(number) }
      state.withLock { $0.sources.append(source) }
      source.resume()
    }
  }

  /// The first signal caught so far, if any.
  public var caught: Int32? { state.withLock { $0.caught } }

  /// The first signal caught, waiting for one if none has come yet. Any number of callers
  /// may wait (one during start-up, one while serving).
  public func wait() async -> Int32 {
    await withCheckedContinuation { continuation in
      let caught: Int32? = state.withLock { state in
        if let caught = state.caught { return caught }
        state.waiters.append(continuation)
        return nil
      }
      if let caught { continuation.resume(returning: caught) }
    }
  }

  private func fire(_ number: Int32) {
    let waiters: [CheckedContinuation<Int32, Never>] = state.withLock { state in
      guard state.caught == nil else { return [] }
      state.caught = number
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume(returning: number) }
  }

  deinit {
    for source in state.withLock({ $0.sources }) { source.cancel() }
  }
}
