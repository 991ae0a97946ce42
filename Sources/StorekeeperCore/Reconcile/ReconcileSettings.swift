/// How subscription reconciliation paces itself (`RECONCILE_*`, see the README).
package struct ReconcileSettings: Sendable, Equatable {
  /// `RECONCILE_INTERVAL`: how often each subscriber is compared with Apple by the background
  /// pass; nil (the default, or `off`) leaves the pass off and only the command runs.
  package var intervalMs: Int64?
  /// `RECONCILE_BATCH_SIZE`: subscriptions one lease claims at a time.
  package var batchSize = 50
  /// `RECONCILE_MAX_PER_PASS`: subscriptions one background pass checks at most.
  package var maxPerPass = 1000
  /// `RECONCILE_RATE`: requests per second to Apple, per instance.
  package var ratePerSecond = 5.0
  /// `RECONCILE_RECENT`: a subscription whose access (expiry, grace period or revocation) ended
  /// within this is still checked. Apple retries billing for up to 60 days, and a recovery in
  /// that time is a renewal Storekeeper must not miss.
  package var recentMs: Int64 = 60 * 86_400_000

  package init(
    intervalMs: Int64? = nil, batchSize: Int = 50, maxPerPass: Int = 1000,
    ratePerSecond: Double = 5.0, recentMs: Int64 = 60 * 86_400_000
  ) {
    self.intervalMs = intervalMs
    self.batchSize = batchSize
    self.maxPerPass = maxPerPass
    self.ratePerSecond = ratePerSecond
    self.recentMs = recentMs
  }

  /// A claim outlives a stuck pass by this much; then another instance takes the work.
  static let leaseSeconds = 600
}
