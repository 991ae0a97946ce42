import Postgres

/// Notifications that arrived before their transaction was known wait as `deferred`; a
/// settlement that records the transaction wakes them in the same statement.
enum DeferredNotifications {
  static func wakeEffect(transactionId: String, originalTransactionId: String) -> PostgresQuery {
    """
    UPDATE apple_notifications SET state = \(NotificationState.pending)
    WHERE state = \(NotificationState.deferred) AND EXISTS (SELECT 1 FROM changed)
      AND (transaction_id = \(transactionId) OR original_transaction_id = \(originalTransactionId))
    """
  }

  /// Wakes deferred notifications whose wait is over. The settlement's own wake reads the
  /// notification as its statement began: one deferred by a pass that looked for the
  /// transaction while that settlement was still uncommitted is committed as `deferred` too
  /// late for it, and would wait forever (a refund never taken back). Run before every pass, and
  /// settling wakes a pass, so such a notification applies moments later. Only those that would
  /// now apply are woken, so none goes round in circles.
  ///
  /// That race is over in moments: a pass checks the notifications deferred in the last
  /// `recentMinutes`; `all` (once an hour, `DeferredWakeSchedule`) checks every one, those a
  /// release before 0126 deferred without a time included. Deferred notifications grow with
  /// purchases never reported here, and each costs a probe.
  static func wakeReady(all: Bool) -> PostgresQuery {
    var query: PostgresQuery = """
      UPDATE apple_notifications n SET state = \(NotificationState.pending)
      WHERE n.state = \(NotificationState.deferred)
      """
    if !all {
      query.append(" AND n.deferred_at >= now() - \(recentMinutes) * interval '1 minute'")
    }
    query.append(" AND ")
    query.append(readyCondition)
    return query
  }

  static let recentMinutes: Int32 = 15

  /// A renewal nobody reported whose notification found it refunded was finished `superseded`
  /// (`NotificationEffects.renew`): its period was Apple's to take back. A reversal of that
  /// refund makes it paid again, and the renewal's notification is the only word of the
  /// period Storekeeper has, so it is applied again.
  static func wakeRenewalsHeldForRefund(_ transactionId: String, on tx: PostgresTransaction)
    async throws
  {
    try await tx.execute(
      """
      UPDATE apple_notifications SET state = \(NotificationState.pending)
      WHERE transaction_id = \(transactionId) AND state = \(NotificationState.processed)
        AND result = \(NotificationResult.superseded)
        AND \(try JSONCoding.text(NotificationEffects.renewalTypes))::jsonb ? notification_type
      """)
  }

  private static let readyCondition: PostgresQuery = """
    CASE n.result
      WHEN \(NotificationResult.originalTransactionUnknown) THEN EXISTS (
        SELECT 1 FROM apple_transactions t
        WHERE t.original_transaction_id = n.original_transaction_id AND t.user_id IS NOT NULL)
      ELSE EXISTS (
        SELECT 1 FROM apple_transactions t
        WHERE t.transaction_id = n.transaction_id AND t.trade_no IS NOT NULL)
      END
    """
}
