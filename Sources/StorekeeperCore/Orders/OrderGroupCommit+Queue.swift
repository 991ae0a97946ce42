import Dispatch
import Postgres

/// The requests waiting for a flush, always read and written under `OrderGroupCommit`'s lock.
extension OrderGroupCommit {
  /// A request waiting for the next flush.
  struct Waiting: Sendable {
    let id: UInt64
    let submission: Submission
    /// When it stops waiting and is answered `queueTimedOut`, unless a flush took it first.
    let deadline: DispatchTime
    let continuation: CheckedContinuation<Wakeup, Never>
  }

  /// What a waiting request is woken for: its answer, or to lead the next flush.
  enum Wakeup: Sendable {
    case answered(Result<Order, any Error>)
    case lead
  }

  struct State: ~Copyable {
    /// FIFO, and so in deadline order: every request waits at most the same time.
    var queue: [Waiting] = []
    var flushing = 0
    /// When the scheduled sweep of timed-out waiters runs; nil when none is scheduled. One
    /// sweep serves every waiter, as for the pool's (`PostgresPoolState`), instead of a timer
    /// per request.
    var sweepAt: DispatchTime?

    mutating func take(_ limit: Int) -> [Waiting] {
      let count = min(limit, queue.count)
      let batch = Array(queue.prefix(count))
      queue.removeFirst(count)
      return batch
    }

    /// Queues a request; returns when a sweep must be scheduled for it (none is due by its
    /// deadline).
    mutating func wait(_ waiting: Waiting) -> DispatchTime? {
      queue.append(waiting)
      if let sweepAt, sweepAt <= waiting.deadline { return nil }
      sweepAt = waiting.deadline
      return waiting.deadline
    }

    /// Takes request `id` out of the queue; nil when a flush took it first (or it timed out).
    mutating func withdraw(_ id: UInt64) -> Waiting? {
      guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
      return queue.remove(at: index)
    }

    /// Takes out the requests whose deadline has passed at `now`. The sweep that was due at
    /// `scheduled` also says when the next one is due, if any request is left; a sweep that was
    /// superseded schedules nothing, so there is never more than one chain.
    mutating func sweep(now: DispatchTime, scheduled: DispatchTime) -> (
      expired: [Waiting], next: DispatchTime?
    ) {
      let count = queue.prefix(while: { $0.deadline <= now }).count
      let expired = Array(queue.prefix(count))
      queue.removeFirst(count)
      guard sweepAt == scheduled else { return (expired, nil) }
      sweepAt = queue.first?.deadline
      return (expired, sweepAt)
    }
  }

  /// The answer of a request that waited `ORDER_QUEUE_TIMEOUT` for a flush to take it: nothing
  /// of it was sent to the database, and nothing ever will be. Unavailable, like a pool that
  /// lends no session in time: 503 `database_unavailable` with `Retry-After`.
  static let queueTimedOut = PostgresError(
    kind: .poolTimeout, message: "no order flush took this order within ORDER_QUEUE_TIMEOUT")

  func scheduleSweep(at time: DispatchTime) {
    DispatchQueue.global().asyncAfter(deadline: time) { [weak self] in
      self?.sweep(scheduled: time)
    }
  }

  /// Answers every request past its deadline, unwritten.
  private func sweep(scheduled: DispatchTime) {
    let now = DispatchTime.now()
    let (expired, next, flushing) = state.withLock { state in
      let (expired, next) = state.sweep(now: now, scheduled: scheduled)
      return (expired, next, state.flushing)
    }
    if !expired.isEmpty {
      queueTimeouts.add(expired.count, ordering: .relaxed)
      // The first sign of a database that takes orders no more (a flush stuck on a lock, on a
      // host that vanished): say it now, not when the flush ends.
      logger.warning(
        "orders waited past ORDER_QUEUE_TIMEOUT for a flush; answered 503 and never written",
        ["orders": .int(expired.count), "flushes_running": .int(flushing)])
    }
    for waiting in expired {
      waiting.continuation.resume(returning: .answered(.failure(Self.queueTimedOut)))
    }
    if let next { scheduleSweep(at: next) }
  }

  /// Requests waiting for a flush to take them (for tests).
  var waitingCount: Int { state.withLock { $0.queue.count } }

  /// Answers request `id` with `error`, unwritten, unless a flush took it first.
  func withdraw(_ id: UInt64, answering error: any Error) {
    guard let waiting = state.withLock({ $0.withdraw(id) }) else { return }
    waiting.continuation.resume(returning: .answered(.failure(error)))
  }
}
