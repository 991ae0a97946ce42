import StorekeeperCore
import Synchronization

/// When this instance's background pass may run next: at every tick while passes succeed (the
/// per-subscription `checked_at` decides what is due), and after Apple was unreachable or rate
/// limiting, only once a backoff has passed (1 minute, doubling, at most the interval).
package final class ReconcileSchedule: Sendable {
  static let firstBackoffMs: Int64 = 60_000

  private let reconciler: SubscriptionReconciler
  private let intervalMs: Int64
  private let clock: WallClock
  private let state = Mutex<(notBeforeMs: Int64, backoffMs: Int64)>((0, 0))

  package init(reconciler: SubscriptionReconciler, intervalMs: Int64, clock: WallClock) {
    self.reconciler = reconciler
    self.intervalMs = intervalMs
    self.clock = clock
  }

  /// How often the background loop ticks: often enough to notice due subscriptions and the
  /// end of a backoff, never more often than the interval itself.
  package var tickMs: Int64 { min(intervalMs, 60_000) }

  package func runOnce() async {
    let now = clock.milliseconds
    // Due once the backoff has run out, or when the clock reads before it began (it moved
    // back): a pass never waits longer than its backoff.
    guard
      state.withLock({ state in
        WallClock.isDue(
          nowMs: now, lastMs: state.notBeforeMs - state.backoffMs, intervalMs: state.backoffMs)
      })
    else { return }
    let summary = await reconciler.run(
      trigger: .background, dryRun: false, limit: reconciler.settings.maxPerPass, dueOnly: true)
    state.withLock { state in
      if summary.failure == nil {
        state = (0, 0)
      } else {
        let backoff = min(intervalMs, max(Self.firstBackoffMs, state.backoffMs * 2))
        state = (clock.milliseconds + backoff, backoff)
      }
    }
  }
}
