/// How subscription reconciliation paces itself (`RECONCILE_*`, see the README).
struct ReconcileSettings: Sendable, Equatable {
  /// `RECONCILE_INTERVAL`: how often each subscriber is compared with Apple by the background
  /// pass; nil (the default, or `off`) leaves the pass off and only the command runs.
  var intervalMs: Int64?
  /// `RECONCILE_BATCH_SIZE`: subscriptions one lease claims at a time.
  var batchSize = 50
  /// `RECONCILE_MAX_PER_PASS`: subscriptions one background pass checks at most.
  var maxPerPass = 1000
  /// `RECONCILE_RATE`: requests per second to Apple, per instance.
  var ratePerSecond = 5.0
  /// `RECONCILE_RECENT`: a subscription whose access (expiry, grace period or revocation) ended
  /// within this is still checked. Apple retries billing for up to 60 days, and a recovery in
  /// that time is a renewal Storekeeper must not miss.
  var recentMs: Int64 = 60 * 86_400_000

  /// A claim outlives a stuck pass by this much; then another instance takes the work.
  static let leaseSeconds = 600
}
