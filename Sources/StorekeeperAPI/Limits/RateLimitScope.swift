/// Which buckets a route draws from.
enum RateLimitScope: Sendable, Equatable {
  /// Operators' endpoints and Apple's notifications (Apple sends bursts from shared addresses,
  /// and its notifications must never be dropped for being many).
  case none
  /// Every app and admin route: per client address.
  case address
  /// Creating orders, spending and granting balances: per address and per user.
  case addressAndUser
  /// Reports (`POST /v1/trade-reports`): per address and from the user's proof budget.
  case addressAndProofs
  /// Receipts (`POST /v1/receipts`): per address, per user and from the user's proof budget.
  case addressUserAndProofs

  /// Draws from the user's request bucket (`RATE_LIMIT_PER_USER`).
  var countsUser: Bool { self == .addressAndUser || self == .addressUserAndProofs }
  /// Draws from the user's proof budget (`PROOF_BYTES_PER_USER`).
  var countsProofs: Bool { self == .addressAndProofs || self == .addressUserAndProofs }
}
