import Postgres

/// The second step of deleting an endpoint: `WebhookStore.delete` only marks it, and each
/// webhook pass removes what is left of marked endpoints, a bounded batch at a time, so neither
/// the admin nor any event writer ever waits for an endpoint's whole history to go.
extension WebhookQueue {
  /// How many deliveries of deleted endpoints one pass deletes at most: one short statement.
  package static let removalBatch = 1000

  /// Deletes up to `limit` deliveries of deleted endpoints (their attempts with them), and once
  /// a batch comes back short, the rows of deleted endpoints with no delivery left; returns how
  /// many deliveries went. A row is locked `FOR UPDATE SKIP LOCKED`: an event insert that read
  /// the endpoint before it was marked holds a key-share lock on it until it commits (the
  /// fan-out's, and its foreign key check's), and the row is left for a later pass instead of
  /// making that insert fail. Deliveries such an insert queued meanwhile are never sent (the
  /// claim skips deleted endpoints) and go with the row.
  package func removeDeleted(limit: Int = removalBatch) async throws -> Int {
    let removed = try await database.execute(
      """
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT d.id FROM webhook_endpoints w JOIN webhook_deliveries d ON d.endpoint_id = w.id
        WHERE w.deleted_at IS NOT NULL
        LIMIT \(limit))
      """)
    guard removed < limit else { return removed }
    try await database.execute(
      """
      DELETE FROM webhook_endpoints WHERE id IN (
        SELECT w.id FROM webhook_endpoints w
        WHERE w.deleted_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id)
        FOR UPDATE SKIP LOCKED)
      """)
    return removed
  }
}
