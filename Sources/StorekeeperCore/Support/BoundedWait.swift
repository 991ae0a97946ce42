import Synchronization

/// Waiting for work that may never end: a statement sent to a database that stopped answering
/// (a hung host, a partition dropping packets) waits for its reply with no end, and neither a
/// cancel (which needs the server) nor TCP keepalives (the socket is busy) cut it short.
package enum BoundedWait {
  /// Runs `work` and waits for it at most `limit`. True when it finished in time; otherwise
  /// false, and `work` is left running (it ends with the process, or when its reply comes).
  package static func finish(within limit: Duration, _ work: @escaping @Sendable () async -> Void)
    async
    -> Bool
  {
    await value(within: limit, else: false) {
      await work()
      return true
    }
  }

  /// What `work` returns if it does within `limit`, else `fallback` (`work` is left running).
  /// Work that ends in time cancels the timer: `/readyz` runs this on every probe, and a
  /// timer left sleeping out its limit would hold a task per probe for that long.
  package static func value<T: Sendable>(
    within limit: Duration, else fallback: T, _ work: @escaping @Sendable () async -> T
  ) async -> T {
    let waiter = Waiter<T>()
    return await withCheckedContinuation { continuation in
      waiter.set(continuation)
      let timer = Task {
        try? await Task.sleep(for: limit)
        waiter.resume(fallback)
      }
      Task {
        waiter.resume(await work())
        timer.cancel()
      }
    }
  }

  /// Resumes the continuation once: with whichever of the work and the timer ends first.
  private final class Waiter<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func set(_ value: CheckedContinuation<T, Never>) { continuation.withLock { $0 = value } }

    func resume(_ result: T) {
      continuation.withLock { value in
        defer { value = nil }
        return value
      }?.resume(returning: result)
    }
  }
}
