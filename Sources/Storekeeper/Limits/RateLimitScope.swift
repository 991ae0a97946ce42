/// Which buckets a route draws from.
enum RateLimitScope: Sendable, Equatable {
  /// Operators' endpoints and Apple's notifications (Apple sends bursts from shared addresses,
  /// and its notifications must never be dropped for being many).
  case none
  /// Every app and admin route: per client address.
  case address
  /// Writes that act for a user (creating orders, posting receipts): per address and per user.
  case addressAndUser
}
