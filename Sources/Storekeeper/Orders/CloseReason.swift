import Postgres

/// Why a `TRADE_CLOSED` order is closed. The first three leave the order payable (a late payment
/// reopens it); the last two are Apple taking a payment back.
enum CloseReason: String, Codable, Sendable, CaseIterable, PostgresEnum {
  case cancelled
  case failed
  case expired
  case refunded
  case revoked

  /// Closed before any payment arrived: a verified payment may still reopen the order.
  var isPayable: Bool { self == .cancelled || self == .failed || self == .expired }
}
