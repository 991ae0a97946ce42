import Postgres

/// One subscription as Storekeeper holds it: its transactions' dates and the last renewal
/// state a notification recorded. Read with its rows locked, so a repair is decided on what it
/// changes and a notification or another instance cannot slip in between.
struct StoredSubscription: Sendable, Equatable {
  struct Transaction: Sendable, Equatable {
    var expiresMs: Int64?
    var revocationMs: Int64?
  }

  var originalTransactionId: String
  var userId: String?
  var transactions: [String: Transaction]
  var status: SubscriptionStatus?
  var graceMs: Int64?

  static func load(_ originalTransactionId: String, on tx: PostgresTransaction) async throws
    -> StoredSubscription
  {
    var stored = StoredSubscription(
      originalTransactionId: originalTransactionId, userId: nil, transactions: [:])
    for row in try await tx.query(
      """
      SELECT transaction_id, user_id,
        (extract(epoch FROM expires_date) * 1000)::bigint AS expires_ms,
        (extract(epoch FROM revocation_date) * 1000)::bigint AS revocation_ms
      FROM apple_transactions WHERE original_transaction_id = \(originalTransactionId)
      ORDER BY purchase_date, transaction_id FOR UPDATE
      """)
    {
      stored.transactions[try row.decode("transaction_id")] = Transaction(
        expiresMs: try row.decodeIfPresent("expires_ms"),
        revocationMs: try row.decodeIfPresent("revocation_ms"))
      // The owner of the latest purchase, as renewals find it.
      if let user: String = try row.decodeIfPresent("user_id") { stored.userId = user }
    }
    if let row = try await tx.query(
      """
      SELECT status, (extract(epoch FROM grace_expires_at) * 1000)::bigint AS grace_ms
      FROM subscription_states WHERE original_transaction_id = \(originalTransactionId) FOR UPDATE
      """
    ).first {
      stored.status = try row.decodeIfPresent("status")
      stored.graceMs = try row.decodeIfPresent("grace_ms")
    }
    return stored
  }
}
