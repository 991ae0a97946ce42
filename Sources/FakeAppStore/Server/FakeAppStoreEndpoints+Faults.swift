import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// `POST /fake/v1/faults`: what the next verifyReceipt requests get. `mode: none` clears.
  func setFault(_ request: Request) throws -> Response {
    let body = try FakeJSON.decode(FakeFaultRequest.self, from: request)
    guard let mode = FakeFaultMode(rawValue: body.mode) else {
      throw FakeJSON.invalid(
        "mode", "must be one of " + FakeFaultMode.allCases.map(\.rawValue).joined(separator: ", "))
    }
    if let count = body.count, count < 1 { throw FakeJSON.invalid("count", "must be at least 1") }
    if let seconds = body.seconds, !(seconds > 0) {
      throw FakeJSON.invalid("seconds", "must be positive")
    }
    if let delay = body.delayMs, delay < 0 {
      throw FakeJSON.invalid("delay_ms", "must not be negative")
    }
    let now = Self.now()
    let fault =
      mode == .none
      ? FakeFault.none
      : FakeFault(
        mode: mode, remainingCount: body.count,
        expiresAt: body.seconds.map { now + Int64(($0 * 1000).rounded()) },
        delayMilliseconds: body.delayMs ?? FakeFault.defaultDelayMilliseconds)
    faults.set(fault)
    logger.info("fault set", ["mode": .string(mode.rawValue)])
    return try FakeJSON.response(
      FakeFaultResponse(faults.peek(now: now), heldRequests: hold.activeCount))
  }
}
