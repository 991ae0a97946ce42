import Foundation
import Synchronization

@testable import Storekeeper

/// A clock a test moves by hand.
final class ManualClock: Sendable {
  private let current: Mutex<Date>

  init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

  var clock: WallClock { WallClock { [self] in current.withLock { $0 } } }

  func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
