import Foundation
import StorekeeperCore
import Synchronization

/// A clock a test moves by hand.
package final class ManualClock: Sendable {
  private let current: Mutex<Date>

  package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
    current = Mutex(start)
  }

  package var clock: WallClock { WallClock { [self] in current.withLock { $0 } } }

  package func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
