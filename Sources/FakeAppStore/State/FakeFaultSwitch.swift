import Synchronization

/// The fault currently set with `POST /fake/v1/faults`; each verifyReceipt request takes one
/// hit of it.
final class FakeFaultSwitch: Sendable {
  private let current = Mutex(FakeFault.none)

  init() {}

  func set(_ fault: FakeFault) {
    current.withLock { $0 = fault }
  }

  /// The fault as it stands now (cleared once its count or time has run out).
  func peek(now: Int64) -> FakeFault {
    current.withLock { fault in
      if !fault.isActive(at: now) { fault = .none }
      return fault
    }
  }

  /// The fault this request gets, counting it against the fault's `count`.
  func take(now: Int64) -> FakeFault {
    current.withLock { fault in
      guard fault.isActive(at: now) else {
        fault = .none
        return .none
      }
      let taken = fault
      if let remaining = fault.remainingCount { fault.remainingCount = remaining - 1 }
      return taken
    }
  }
}
