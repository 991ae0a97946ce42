import Synchronization

/// Webhook attempts by outcome since start (this instance's): counted by the dispatcher,
/// read by `/metrics`.
package final class WebhookAttemptCounts: Sendable {
  private let counts = Mutex<[WebhookQueue.Outcome: Int64]>([:])

  package init() {}

  package func record(_ outcome: WebhookQueue.Outcome) {
    counts.withLock { $0[outcome, default: 0] += 1 }
  }

  package var all: [WebhookQueue.Outcome: Int64] { counts.withLock { $0 } }
}
