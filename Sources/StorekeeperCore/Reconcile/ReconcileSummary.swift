/// What one reconcile pass did: subscriptions compared with Apple, repairs made (or, in a dry
/// run, that would be made), subscriptions Apple could not answer for, and why the pass
/// stopped early if it did.
package struct ReconcileSummary: Sendable {
  package struct Repair: Sendable {
    package var userId: String
    package var originalTransactionId: String
    package var repair: SubscriptionRepair
  }

  package var runId: Int64?
  var dryRun: Bool
  var checked = 0
  var errors = 0
  package var repairs: [Repair] = []
  /// Apple unreachable, rate limiting us, refusing the key, or the database gone: the pass
  /// stopped and the rest waits for the next one.
  package var failure: String?

  /// Subscriptions repaired (one may need several repairs).
  var repaired: Int { Set(repairs.map(\.originalTransactionId)).count }

  /// One line for people and logs.
  package var line: String {
    let verb = dryRun ? "would repair" : "repaired"
    var text = "reconcile: checked \(checked), \(verb) \(repaired), errors \(errors)"
    if let failure { text += "; stopped: \(failure)" }
    return text
  }
}
