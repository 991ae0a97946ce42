/// When a report that waits on Apple is tried again, and when it is given up: one value, read
/// by the retry worker for both decisions, so the delay and the give-up test cannot disagree.
///
/// Delays double from `baseMs` up to `capMs`; the report is given up at the attempt after which
/// the next one would fall past `windowMs` from the first. With the defaults (30 s, 1 h, 72 h)
/// the delays run 30 s, 1 min, … 32 min, then hourly, and the last attempt comes 71–72 h after
/// the first.
package struct RetryPolicy: Sendable, Equatable {
  var baseMs: Int64
  package var capMs: Int64 = 3_600_000
  var windowMs: Int64

  package init(baseMs: Int64, capMs: Int64 = 3_600_000, windowMs: Int64) {
    self.baseMs = baseMs
    self.capMs = capMs
    self.windowMs = windowMs
  }

  package enum Decision: Equatable, Sendable {
    /// Try again at this time (epoch milliseconds).
    case retry(atMs: Int64)
    case giveUp
  }

  /// The wait after the `attempt`-th attempt (1 is the first).
  func delayMs(afterAttempt attempt: Int) -> Int64 {
    let doublings = min(max(attempt - 1, 0), 40)
    var delay = max(baseMs, 1)
    for _ in 0..<doublings {
      if delay >= capMs { break }
      delay *= 2
    }
    return min(delay, capMs)
  }

  /// What to do after the `attempt`-th attempt failed at `nowMs`, for a report first tried at
  /// `firstAttemptMs`.
  package func decision(afterAttempt attempt: Int, firstAttemptMs: Int64, nowMs: Int64) -> Decision
  {
    let next = nowMs + delayMs(afterAttempt: attempt)
    return next > firstAttemptMs + windowMs ? .giveUp : .retry(atMs: next)
  }
}
