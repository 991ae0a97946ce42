import Dispatch
import Synchronization

extension PostgresConnection {
  /// Runs `query`, cancelling it on the server if it takes longer than `timeout`. A
  /// cancelled session is poisoned so the pool discards it: the cancel may land late, and it
  /// must never hit the next user's statement.
  func query(_ query: PostgresQuery, timeout: Duration) async throws -> [PostgresRow] {
    let finished = Mutex(false)
    let timer = DispatchWorkItem { [self] in
      // Deciding under the lock orders it against `finished`: once the query is marked
      // finished, no cancel is started. One started just before may still land after the
      // query ended (`cancelRunningQuery` sends it from another thread): the session is
      // poisoned first, so it hits no other borrower's statement.
      finished.withLock { done in
        if !done { cancelRunningQuery() }
      }
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval, execute: timer)
    defer {
      timer.cancel()
      finished.withLock { $0 = true }
    }
    return try await self.query(query)
  }
}

extension Duration {
  var dispatchInterval: DispatchTimeInterval {
    let (seconds, attoseconds) = components
    let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !nanoseconds.overflow else { return .never }
    return .nanoseconds(Int(nanoseconds.partialValue + attoseconds / 1_000_000_000))
  }
}
