import AppStore
import Postgres

extension NotificationEffects {
  /// RESCIND_CONSENT: a parent or guardian withdrew consent for the app. Apple names the Apple
  /// Account's download of the app (`appData.signedAppTransactionInfo.appTransactionId`), not a
  /// purchase; the users whose purchases carry that id are found through its index, the
  /// withdrawal is recorded with them (`consent_rescissions`), and each user's backend hears it
  /// (`consent.rescinded`) to end what the consent allowed. Nothing a user owns changes here:
  /// what to keep for a minor is the app's decision.
  func rescindConsent(_ stored: StoredNotification, notice: [String: JSONValue]) async throws
    -> NotificationOutcome
  {
    let appTransactionId = TransactionRecord.validAppTransactionId(
      stored.appTransaction?.appTransactionId)
    var users: [String] = []
    if let appTransactionId {
      users = try await TransactionRecord.users(appTransactionId: appTransactionId, on: tx)
    }
    let environment =
      stored.notification.appData?.environment ?? stored.appTransaction?.receiptType
    var insert: PostgresQuery = """
      INSERT INTO consent_rescissions (notification_uuid, app_transaction_id, environment,
        user_ids, rescinded_at)
      VALUES (\(uuid), \(appTransactionId), \(environment), \(PostgresArray(users))::text[],
      """
    insert.append(TransactionRecord.time(stored.notification.signedDate ?? clock.milliseconds))
    insert.append(") ON CONFLICT (notification_uuid) DO NOTHING")
    try await tx.execute(insert)
    var rescinded = notice
    if let appTransactionId { rescinded["app_transaction_id"] = .string(appTransactionId) }
    if let environment { rescinded["environment"] = .string(environment) }
    rescinded["rescinded_at"] = EventTime.value(
      ms: stored.notification.signedDate ?? clock.milliseconds)
    try await outbox.lock(users, on: tx)
    for user in users {
      try await outbox.append([EventDraft(.consentRescinded, rescinded)], for: user, on: tx)
    }
    return .processed(.consentRescinded)
  }
}
