import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Waiting for termination signals without an async-signal-unsafe handler.
public enum Signals {
  /// Returns the first of `signals` delivered to the process. The signals' default actions are
  /// replaced by SIG_IGN first, so the process is not killed before the wait sees them.
  public static func wait(for signals: [Int32]) async -> Int32 {
    await withCheckedContinuation { continuation in
      let waiter = SignalWaiter(continuation)
      for number in signals {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { waiter.fire(number) }
        waiter.keep(source)
        source.resume()
      }
    }
  }
}

/// Resumes the continuation once and then cancels every source.
private final class SignalWaiter: Sendable {
  private struct State: @unchecked Sendable {
    // DispatchSource objects are thread-safe; they are only retained and cancelled here.
    var continuation: CheckedContinuation<Int32, Never>?
    var sources: [any DispatchSourceSignal] = []
  }

  private let state: Mutex<State>

  init(_ continuation: CheckedContinuation<Int32, Never>) {
    state = Mutex(State(continuation: continuation))
  }

  func keep(_ source: any DispatchSourceSignal) { state.withLock { $0.sources.append(source) } }

  func fire(_ number: Int32) {
    let (continuation, sources) = state.withLock { state in
      let taken = (state.continuation, state.sources)
      state.continuation = nil
      state.sources = []
      return taken
    }
    for source in sources { source.cancel() }
    continuation?.resume(returning: number)
  }
}
