import AppStore
import Postgres

/// What Apple's stored refund notifications (REFUND, REVOKE, REFUND_REVERSED) say about one
/// transaction. Apple delivers them in no particular order and re-delivers old ones (retries for
/// up to 72 hours, notification-history recovery), so the one Apple signed last is its word,
/// whichever arrived last. Every lookup goes through `apple_notifications_transaction`: a
/// transaction has a handful of notifications at most.
enum RefundHistory {
  /// Apple's refund or revocation of a transaction, as its notification's transaction says.
  struct Revocation: Sendable {
    /// When Apple refunded it (the notification's signing time if the payload has no date).
    var atMs: Int64
    var reason: Int?
  }

  /// Apple's refund or revocation when its last-signed refund notification for the transaction
  /// refunds or revokes it; nil when there is none, or a later reversal undid it. Stored is
  /// enough, in any state: a refund deferred because its purchase was not yet known is Apple's
  /// signed word all the same, and a settlement that credited the purchase before the next
  /// notification pass applied it would hand out what Apple took back.
  static func revocation(_ transactionId: String, on tx: PostgresTransaction) async throws
    -> Revocation?
  {
    guard
      let row = try await tx.query(
        """
        SELECT notification_type,
          coalesce((payload->'transaction'->>'revocationDate')::bigint,
            (extract(epoch FROM signed_date) * 1000)::bigint, 0) AS revoked_ms,
          (payload->'transaction'->>'revocationReason')::integer AS reason,
          \(unescaped: Self.prorated("payload")) AS prorated
        FROM apple_notifications
        WHERE transaction_id = \(transactionId)
          AND \(try JSONCoding.text(NotificationEffects.refundTypes))::jsonb ? notification_type
        ORDER BY signed_date DESC NULLS LAST, seq DESC LIMIT 1
        """
      ).first
    else { return nil }
    let type: String = try row.decode("notification_type")
    guard type != NotificationType.refundReversed.rawValue,
      try !row.decode("prorated", as: Bool.self)
    else { return nil }
    let reason: Int32? = try row.decodeIfPresent("reason")
    return Revocation(atMs: try row.decode("revoked_ms"), reason: reason.map(Int.init))
  }

  /// Whether Apple's last-signed refund notification for the transaction is a reversal: a
  /// proof that still says refunded was signed before it.
  static func reversed(_ transactionId: String, on tx: PostgresTransaction) async throws -> Bool {
    try await tx.query(
      """
      SELECT notification_type FROM apple_notifications
      WHERE transaction_id = \(transactionId)
        AND \(try JSONCoding.text(NotificationEffects.refundTypes))::jsonb ? notification_type
      ORDER BY signed_date DESC NULLS LAST, seq DESC LIMIT 1
      """
    ).first?.decode("notification_type", as: String.self)
      == NotificationType.refundReversed.rawValue
  }

  /// A scalar subquery: which of the transaction ids in `ids` (a JSON array parameter) the
  /// last-signed refund notification revokes, as a JSON array, like `revocation` for each. Read
  /// in the statement that locks a reported order, so a report pays no extra round trip.
  static func revokedAmong(_ ids: String) throws -> PostgresQuery {
    """
    (SELECT coalesce(jsonb_agg(last.transaction_id), '[]')::text FROM (
       SELECT DISTINCT ON (n.transaction_id) n.transaction_id, n.notification_type,
         \(unescaped: prorated("n.payload")) AS prorated
       FROM apple_notifications n
       WHERE n.transaction_id = ANY (ARRAY(SELECT jsonb_array_elements_text(\(ids)::jsonb)))
         AND \(try JSONCoding.text(NotificationEffects.refundTypes))::jsonb ? n.notification_type
       ORDER BY n.transaction_id, n.signed_date DESC NULLS LAST, n.seq DESC) last
     WHERE last.notification_type <> \(NotificationType.refundReversed.rawValue)
       AND NOT last.prorated)
    """
  }

  /// Whether a stored notification's transaction is a prorated refund of a one-time purchase
  /// (`NotificationEffects.proratedRefund`): a share taken back, the purchase still live.
  static func prorated(_ payload: String) -> String {
    """
    coalesce(\(payload)->'transaction'->>'revocationType' = 'REFUND_PRORATED'
      AND (\(payload)->'transaction'->>'revocationPercentage')::integer < 100000
      AND \(payload)->'transaction'->>'type' IS DISTINCT FROM 'Auto-Renewable Subscription',
      false)
    """
  }

  /// Which of a notification's keys `superseded` compares.
  enum Key {
    /// One purchase: refunds and their reversals.
    case transaction(String)
    /// One subscription: what sets its renewal state.
    case subscription(String)
  }

  /// True when another notification of `types` about the same `key` was signed after
  /// notification `uuid`: that one is Apple's later word, whether it was applied already or
  /// waits to be, so this one must change nothing (a REFUND signed before a REFUND_REVERSED
  /// must not close the order the reversal left paid).
  static func superseded(
    _ uuid: String, types: [String], key: Key, on tx: PostgresTransaction
  ) async throws -> Bool {
    // Each key is compared on its own indexed column, never through an OR a plan cannot index.
    var query: PostgresQuery = """
      SELECT 1 FROM apple_notifications later
      JOIN apple_notifications this ON this.notification_uuid = \(uuid)
      WHERE later.notification_uuid <> this.notification_uuid
        AND later.signed_date > this.signed_date
        AND \(try JSONCoding.text(types))::jsonb ? later.notification_type AND
      """
    switch key {
    case .transaction(let id): query.append(" later.transaction_id = \(id)")
    case .subscription(let id): query.append(" later.original_transaction_id = \(id)")
    }
    query.append(" LIMIT 1")
    return try await !tx.query(query).isEmpty
  }
}
