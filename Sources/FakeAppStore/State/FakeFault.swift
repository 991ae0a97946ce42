/// The fault verifyReceipt applies to coming requests, and for how long.
struct FakeFault: Sendable {
  static let defaultDelayMilliseconds = 30_000

  var mode: FakeFaultMode
  /// Requests still to be hit; nil for no count limit.
  var remainingCount: Int?
  /// Milliseconds since 1970 after which the fault is gone; nil for no time limit.
  var expiresAt: Int64?
  /// How long `timeout` holds an answer.
  var delayMilliseconds: Int

  static let none = FakeFault(
    mode: .none, remainingCount: nil, expiresAt: nil, delayMilliseconds: defaultDelayMilliseconds)

  func isActive(at now: Int64) -> Bool {
    guard mode != .none else { return false }
    if let remainingCount, remainingCount <= 0 { return false }
    if let expiresAt, now >= expiresAt { return false }
    return true
  }
}
