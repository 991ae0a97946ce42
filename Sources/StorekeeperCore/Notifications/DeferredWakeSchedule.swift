import Synchronization

/// When this instance last re-checked every deferred notification
/// (`DeferredNotifications.wakeReady(all:)`): at its first pass, then once an hour. Each
/// instance keeps its own; more often is only more work.
package final class DeferredWakeSchedule: Sendable {
  private let last = Mutex<ContinuousClock.Instant?>(nil)
  let interval: Duration

  package init(interval: Duration = .seconds(3600)) {
    self.interval = interval
  }

  /// Whether this pass checks them all; if so, the hour starts again now.
  func takeFullPass(now: ContinuousClock.Instant = .now) -> Bool {
    last.withLock { last in
      if let previous = last, now - previous < interval { return false }
      last = now
      return true
    }
  }
}
