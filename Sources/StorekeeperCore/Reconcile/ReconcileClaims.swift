import Postgres

/// Which subscriptions a pass checks, and the leases that keep two instances (or the command
/// and the background pass) off the same subscription at once.
///
/// A subscription is checked when a user owns it (any of its transactions has a `user_id`),
/// its product is `auto_renewable`, and its access is active or ended recently: the latest of
/// its transactions' expiries, its grace period and its revocations is after now minus
/// `recentMs`.
struct ReconcileClaims: Sendable {
  struct Candidate: Sendable {
    var originalTransactionId: String
    var environment: String
  }

  let database: PostgresPool
  let settings: ReconcileSettings

  private func eligible(dueOnly: Bool, notCheckedSinceMs: Int64?) -> PostgresQuery {
    var query: PostgresQuery = """
      SELECT t.original_transaction_id, min(t.environment) AS environment, c.checked_at
      FROM apple_transactions t
      JOIN products p ON p.product_id = t.product_id AND p.type = \(ProductType.autoRenewable)
      LEFT JOIN subscription_states s ON s.original_transaction_id = t.original_transaction_id
      LEFT JOIN reconcile_checks c ON c.original_transaction_id = t.original_transaction_id
      WHERE t.user_id IS NOT NULL
        AND (c.lease_until IS NULL OR c.lease_until < now())
        AND (NOT \(dueOnly)::boolean OR c.checked_at IS NULL
             OR c.checked_at < now() - \(settings.intervalMs ?? 0)::bigint * interval '1 millisecond')
        AND (\(notCheckedSinceMs)::bigint IS NULL OR c.checked_at IS NULL OR c.checked_at <
      """
    query.append(TransactionRecord.time(notCheckedSinceMs ?? 0))
    query.append(
      """
      )
      GROUP BY t.original_transaction_id, c.checked_at
      HAVING greatest(max(t.expires_date), max(s.grace_expires_at), max(t.revocation_date))
             > now() - \(settings.recentMs)::bigint * interval '1 millisecond'
      """)
    return query
  }

  /// Leases up to `limit` subscriptions: due ones for the background pass, any not yet checked
  /// in this run (started at `runStartMs`) for the command. A subscription another pass holds
  /// is skipped; two passes racing for one meet on its row and only one gets it.
  func claim(limit: Int, dueOnly: Bool, runStartMs: Int64) async throws -> [Candidate] {
    var query: PostgresQuery = "WITH eligible AS ("
    query.append(eligible(dueOnly: dueOnly, notCheckedSinceMs: runStartMs))
    query.append(
      """
       ORDER BY c.checked_at NULLS FIRST, t.original_transaction_id LIMIT \(limit)),
      claimed AS (
        INSERT INTO reconcile_checks (original_transaction_id, lease_until)
        SELECT original_transaction_id, now() + \(ReconcileSettings.leaseSeconds) * interval '1 second'
        FROM eligible
        ON CONFLICT (original_transaction_id) DO UPDATE SET lease_until = EXCLUDED.lease_until
          WHERE reconcile_checks.lease_until < now()
        RETURNING original_transaction_id
      )
      SELECT e.original_transaction_id, e.environment
      FROM eligible e JOIN claimed USING (original_transaction_id)
      ORDER BY e.original_transaction_id
      """)
    return try await database.query(query).map {
      Candidate(
        originalTransactionId: try $0.decode("original_transaction_id"),
        environment: try $0.decode("environment"))
    }
  }

  /// A dry run leases nothing and writes nothing: it pages through the subscriptions by id.
  func peek(limit: Int, after: String) async throws -> [Candidate] {
    var query: PostgresQuery = "SELECT * FROM ("
    query.append(eligible(dueOnly: false, notCheckedSinceMs: nil))
    query.append(
      """
      ) e WHERE e.original_transaction_id > \(after) ORDER BY e.original_transaction_id LIMIT \(limit)
      """)
    return try await database.query(query).map {
      Candidate(
        originalTransactionId: try $0.decode("original_transaction_id"),
        environment: try $0.decode("environment"))
    }
  }

  /// The subscription was compared (and repaired) or Apple refused to answer for it: done until
  /// it is due again.
  func finish(_ originalTransactionId: String, error: String?, on executor: any PostgresExecutor)
    async throws
  {
    try await executor.execute(
      """
      UPDATE reconcile_checks SET checked_at = now(), lease_until = '-infinity', last_error = \(error)
      WHERE original_transaction_id = \(originalTransactionId)
      """)
  }

  /// Leases a pass took but did not get to (it stopped early): free for the next pass.
  func release(_ originalTransactionIds: [String]) async throws {
    guard !originalTransactionIds.isEmpty else { return }
    try await database.execute(
      """
      UPDATE reconcile_checks SET lease_until = '-infinity'
      WHERE original_transaction_id = ANY(string_to_array(\(originalTransactionIds.joined(separator: ",")), ','))
      """)
  }
}
