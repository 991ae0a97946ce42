import Dispatch

/// The pool's bookkeeping, always read and written under the pool's lock.
struct PostgresPoolState {
  /// What a waiting caller is handed: a free session, or the right to open one.
  enum Lease: Sendable {
    case connection(PostgresConnection)
    case slot
  }

  struct Waiter {
    /// When the caller stops waiting and gets `.poolTimeout`.
    var deadline: DispatchTime
    var continuation: CheckedContinuation<Lease, any Error>
  }

  var idle: [PostgresConnection] = []
  /// Sessions counted against the bound: idle, lent out, and being opened.
  var open = 0
  /// FIFO; short (bounded by concurrent requests), so removing from the front is cheap enough.
  var waiters: [Waiter] = []
  var closed = false
  /// When the scheduled sweep of timed-out waiters runs; nil when none is scheduled. One sweep
  /// serves every waiter, instead of a timer per wait.
  var sweepAt: DispatchTime?

  /// Takes an idle session or a free slot, or nil when the caller has to wait.
  mutating func take(maxConnections: Int) -> Lease? {
    if let connection = idle.popLast() { return .connection(connection) }
    if open < maxConnections {
      open += 1
      return .slot
    }
    return nil
  }

  /// Returns a session (or, when `connection` is nil, its slot) and says which waiter, if
  /// any, gets it.
  mutating func give(back connection: PostgresConnection?) -> (Waiter, Lease)? {
    if closed {
      open -= 1
      return nil
    }
    if !waiters.isEmpty {
      let waiter = waiters.removeFirst()
      return (waiter, connection.map { .connection($0) } ?? .slot)
    }
    if let connection {
      idle.append(connection)
    } else {
      open -= 1
    }
    return nil
  }

  /// Queues a caller; returns when a sweep must be scheduled for it (none is due by its
  /// deadline).
  mutating func wait(
    _ continuation: CheckedContinuation<Lease, any Error>, until deadline: DispatchTime
  ) -> DispatchTime? {
    waiters.append(.init(deadline: deadline, continuation: continuation))
    if let sweepAt, sweepAt <= deadline { return nil }
    sweepAt = deadline
    return deadline
  }

  /// Takes out the waiters whose deadline has passed at `now`. The sweep that was due at
  /// `scheduled` also says when the next one is due, if any waiter is left; a sweep that was
  /// superseded by an earlier one schedules nothing, so there is never more than one chain.
  mutating func sweep(now: DispatchTime, scheduled: DispatchTime) -> (
    expired: [Waiter], next: DispatchTime?
  ) {
    var expired: [Waiter] = []
    waiters.removeAll { waiter in
      guard waiter.deadline <= now else { return false }
      expired.append(waiter)
      return true
    }
    guard sweepAt == scheduled else { return (expired, nil) }
    sweepAt = waiters.lazy.map(\.deadline).min()
    return (expired, sweepAt)
  }
}
