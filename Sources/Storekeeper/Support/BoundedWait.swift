import Synchronization

/// Waiting for work that may never end: a statement sent to a database that stopped answering
/// (a hung host, a partition dropping packets) waits for its reply with no end, and neither a
/// cancel (which needs the server) nor TCP keepalives (the socket is busy) cut it short.
enum BoundedWait {
  /// Runs `work` and waits for it at most `limit`. True when it finished in time; otherwise
  /// false, and `work` is left running (it ends with the process, or when its reply comes).
  static func finish(within limit: Duration, _ work: @escaping @Sendable () async -> Void) async
    -> Bool
  {
    let waiter = Waiter()
    return await withCheckedContinuation { continuation in
      waiter.set(continuation)
      Task {
        await work()
        waiter.resume(true)
      }
      Task {
        try? await Task.sleep(for: limit)
        waiter.resume(false)
      }
    }
  }

  /// Resumes the continuation once: with whichever of the work and the timer ends first.
  private final class Waiter: Sendable {
    private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func set(_ value: CheckedContinuation<Bool, Never>) { continuation.withLock { $0 = value } }

    func resume(_ finished: Bool) {
      continuation.withLock { value in
        defer { value = nil }
        return value
      }?.resume(returning: finished)
    }
  }
}
