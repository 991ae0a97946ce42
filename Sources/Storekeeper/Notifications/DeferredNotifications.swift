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
}
