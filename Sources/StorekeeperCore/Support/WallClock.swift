import Foundation

/// The time the domain reads: PostgreSQL's in production (`DatabaseTime`), one a test sets and
/// moves. Domain code never calls `Date()` itself, so expiry, backoff and give-up can be tested
/// without waiting for them.
package struct WallClock: Sendable {
  package let now: @Sendable () -> Date

  package init(now: @escaping @Sendable () -> Date) {
    self.now = now
  }

  package static let system = WallClock { Date() }

  package var milliseconds: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }

  /// Whether an in-process schedule last run at `lastMs` (this clock's reading) is due again
  /// `intervalMs` later, at `nowMs`. A clock that reads before `lastMs` moved back (a new
  /// reading of PostgreSQL's clock, a test): that is due at once, so a schedule never waits out
  /// a backward step.
  package static func isDue(nowMs: Int64, lastMs: Int64, intervalMs: Int64) -> Bool {
    nowMs < lastMs || nowMs - lastMs >= intervalMs
  }
}
