import Postgres

/// Why a `TRADE_CLOSED` order is closed. The first three leave the order payable (a late payment
/// reopens it); `refunded` and `revoked` are Apple taking a payment back; `transferred` is an
/// admin moving the purchase to another user.
package enum CloseReason: String, Codable, Sendable, CaseIterable, PostgresEnum {
  case cancelled
  case failed
  case expired
  case refunded
  case revoked
  case transferred

  /// Closed before any payment arrived: a verified payment may still reopen the order.
  var isPayable: Bool { self == .cancelled || self == .failed || self == .expired }
}
