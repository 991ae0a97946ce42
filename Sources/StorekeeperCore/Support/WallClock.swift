import Foundation

/// The time the domain reads: the system's in production, one a test sets and moves. Domain
/// code never calls `Date()` itself, so expiry, backoff and give-up can be tested without
/// waiting for them.
package struct WallClock: Sendable {
  package let now: @Sendable () -> Date

  package init(now: @escaping @Sendable () -> Date) {
    self.now = now
  }

  package static let system = WallClock { Date() }

  package var milliseconds: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }
}
