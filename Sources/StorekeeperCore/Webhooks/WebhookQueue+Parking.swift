import Postgres

extension WebhookQueue {
  /// Wakes every parked delivery that is the earliest pending one of its user and endpoint, so
  /// none waits for ever behind nothing; returns how many. A delivery finished promotes the
  /// next one (the trigger in `Migrations/repeatable/webhook_promotion.sql`, whichever release
  /// finished it), but two attempts of one user can finish at once (a sender coming back after
  /// its lease ran out, beside the replayed event that went out meanwhile), each finding the
  /// other still pending, so neither promotes what waits behind both. Before that trigger
  /// (0142) an instance of the release before parking promoted nothing.
  /// Waking too many is harmless: a claim parks again what still waits. The walk visits each
  /// (endpoint, user) with pending deliveries once, through `webhook_deliveries_user`, not
  /// each delivery.
  @discardableResult
  package func wakeStranded() async throws -> Int {
    try await database.execute(
      """
      WITH RECURSIVE heads AS (
        (SELECT d.endpoint_id, d.user_id, d.id, d.next_attempt_at FROM webhook_deliveries d
         WHERE d.state = \(literal: .pending)
         ORDER BY d.endpoint_id, d.user_id, d.sequence, d.id LIMIT 1)
        UNION ALL
        SELECT n.endpoint_id, n.user_id, n.id, n.next_attempt_at FROM heads h CROSS JOIN LATERAL (
          SELECT d.endpoint_id, d.user_id, d.id, d.next_attempt_at FROM webhook_deliveries d
          WHERE d.state = \(literal: .pending)
            AND (d.endpoint_id, d.user_id) > (h.endpoint_id, h.user_id)
          ORDER BY d.endpoint_id, d.user_id, d.sequence, d.id LIMIT 1) n)
      UPDATE webhook_deliveries d SET next_attempt_at = now()
      FROM heads h
      WHERE d.id = h.id AND h.next_attempt_at = 'infinity'
        AND d.state = \(literal: .pending) AND d.next_attempt_at = 'infinity'
      """)
  }
}
