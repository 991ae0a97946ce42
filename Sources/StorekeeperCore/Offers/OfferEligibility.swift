import Postgres

/// Who may have a promotional offer signed (`OFFER_ELIGIBILITY`). Apple leaves eligibility to
/// the developer's server and lists every offer id to any app, so the signature is what keeps
/// a retention or win-back discount from anyone who asks.
package enum OfferEligibility: String, Sendable, CaseIterable {
  /// Users with an App Store subscription of this app, current or lapsed: Apple's audience for
  /// promotional offers ("existing or previous subscribers").
  case subscribers
  /// Any signed-in user: the app decides, and accepts that a client can ask for any offer.
  case anyone

  /// Whether `userId` may have an offer signed. A sandbox subscription counts only where
  /// sandbox purchases count (`SANDBOX_POLICY=credit`): under `record_only` a TestFlight
  /// tester's free subscription credits nothing, so it earns no discount on the real one.
  package func allows(
    _ userId: String, sandboxCounts: Bool, on executor: any PostgresExecutor
  ) async throws -> Bool {
    switch self {
    case .anyone: return true
    case .subscribers:
      // Any auto-renewable transaction recorded for the user, refunded or expired included:
      // a former subscriber is who a win-back offer is for (apple_transactions_user). A
      // receipt's row may not name its type; the catalog's product does.
      return try await !executor.query(
        """
        SELECT 1 FROM apple_transactions t LEFT JOIN products p ON p.product_id = t.product_id
        WHERE t.user_id = \(userId)
          AND (t.type = 'Auto-Renewable Subscription' OR p.type = 'auto_renewable')
          AND (t.environment = 'Production' OR \(sandboxCounts))
        LIMIT 1
        """
      ).isEmpty
    }
  }
}
