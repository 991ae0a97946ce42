/// The fault in force: the answer of `GET` and `POST /fake/v1/faults`.
struct FakeFaultResponse: Encodable, Sendable {
  var mode: String
  var remainingCount: Int?
  var expiresAtMs: Int64?
  var delayMs: Int
  /// verifyReceipt requests a `timeout` fault is holding at this moment.
  var heldRequests: Int

  init(_ fault: FakeFault, heldRequests: Int) {
    mode = fault.mode.rawValue
    remainingCount = fault.remainingCount
    expiresAtMs = fault.expiresAt
    delayMs = fault.delayMilliseconds
    self.heldRequests = heldRequests
  }
}
