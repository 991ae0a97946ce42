import Foundation

/// The time the domain reads: the system's in production, one a test sets and moves. Domain
/// code never calls `Date()` itself, so expiry, backoff and give-up can be tested without
/// waiting for them.
struct WallClock: Sendable {
  let now: @Sendable () -> Date

  static let system = WallClock { Date() }

  var milliseconds: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }
}
