import Postgres

/// `Idempotency-Key` records, scoped per user and kept for `retention`.
///
/// The key is claimed in its own committed statement before the work starts, so a concurrent
/// duplicate sees it at once and gets 409 instead of waiting; the work then completes the key
/// in the same transaction that creates the order, so a crash can never leave an order whose
/// key does not know it. A claim left `in_flight` by a crashed process is taken over after
/// `staleAfterSeconds`; each claim carries a token (the instant it was made), and completing
/// or releasing a key needs the claim's own token, so a request that ran past the takeover
/// writes nothing: its transaction rolls back, and the key has one order, the new claim's.
package struct IdempotencyStore: Sendable {
  let database: PostgresPool
  let retentionHours = 24
  let staleAfterSeconds = 60

  package init(database: PostgresPool) {
    self.database = database
  }

  /// A key's row: claimed while its request runs, done once its answer is stored.
  enum State: String, Sendable, PostgresEnum {
    case inFlight = "in_flight"
    case done
  }

  package enum Claim: Sendable {
    /// Claimed by this request; `token` names this claim (see `complete`).
    case claimed(token: String)
    case replay(status: Int, body: [UInt8])
    case inFlight
    case mismatch
  }

  package static func isValidKey(_ key: String) -> Bool {
    !key.isEmpty && key.utf8.count <= 255 && key.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
  }

  package func claim(userId: String, key: String, fingerprint: String) async throws -> Claim {
    let claimed = try await database.query(
      """
      INSERT INTO idempotency_keys (user_id, key, request_hash, state)
      VALUES (\(userId), \(key), \(fingerprint), \(State.inFlight))
      ON CONFLICT (user_id, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, state = \(State.inFlight), created_at = now(),
            response_status = NULL, response_body = NULL
        WHERE (idempotency_keys.state = \(State.inFlight)
               AND idempotency_keys.created_at < now() - \(staleAfterSeconds)::int * interval '1 second')
           OR idempotency_keys.created_at < now() - \(retentionHours)::int * interval '1 hour'
      RETURNING created_at::text AS token
      """)
    if let row = claimed.first { return .claimed(token: try row.decode("token")) }
    guard
      let row = try await database.query(
        """
        SELECT request_hash, state, response_status, response_body FROM idempotency_keys
        WHERE user_id = \(userId) AND key = \(key)
        """
      ).first
    else {
      // Removed between the two statements by the sweeper: claim again.
      return try await claim(userId: userId, key: key, fingerprint: fingerprint)
    }
    let hash: String = try row.decode("request_hash")
    guard hash == fingerprint else { return .mismatch }
    let state: State = try row.decode("state")
    guard state == .done, let status: Int = try row.decodeIfPresent("response_status") else {
      return .inFlight
    }
    let body: [UInt8] = try row.decodeIfPresent("response_body") ?? []
    return .replay(status: status, body: body)
  }

  /// Stores the key's answer; with `token`, only if the key is still that claim's (false when
  /// another request took it over meanwhile).
  @discardableResult
  package func complete(
    userId: String, key: String, status: Int, body: [UInt8], token: String? = nil,
    on executor: any PostgresExecutor
  ) async throws -> Bool {
    try await !executor.query(
      """
      UPDATE idempotency_keys SET state = \(State.done), response_status = \(status), response_body = \(body)
      WHERE user_id = \(userId) AND key = \(key)
        AND (\(token)::timestamptz IS NULL
             OR (state = \(State.inFlight) AND created_at = \(token)::timestamptz))
      RETURNING 1 AS done
      """
    ).isEmpty
  }

  /// `complete` for many keys in one statement (a batch of orders, see `OrderGroupCommit`);
  /// how many of those given a token it stored (fewer when a claim was taken over).
  func complete(
    userIds: [String], keys: [String], statuses: [Int32], bodies: [[UInt8]], tokens: [String?],
    on executor: any PostgresExecutor
  ) async throws -> Int {
    try await executor.query(
      """
      UPDATE idempotency_keys k
      SET state = \(State.done), response_status = a.status, response_body = a.body
      FROM unnest(\(PostgresArray(userIds))::text[], \(PostgresArray(keys))::text[],
                  \(PostgresArray(statuses))::int[], \(PostgresArray(bytea: bodies))::bytea[],
                  \(PostgresArray(tokens))::timestamptz[])
        AS a(user_id, key, status, body, token)
      WHERE k.user_id = a.user_id AND k.key = a.key
        AND (a.token IS NULL OR (k.state = \(State.inFlight) AND k.created_at = a.token))
      RETURNING a.token IS NOT NULL AS claimed
      """
    ).filter { (try? $0.decode("claimed", as: Bool.self)) == true }.count
  }

  /// Frees the key after a failure that the client should be able to retry (5xx, 503), if it
  /// is still this claim's (`token`). Not cancelled with the request: a client that left
  /// (its order withdrawn from the group commit's queue) retries with the same key, which
  /// would otherwise answer 409 until the claim goes stale.
  package func release(userId: String, key: String, token: String? = nil) async {
    _ = try? await database.shielded.execute(
      """
      DELETE FROM idempotency_keys
      WHERE user_id = \(userId) AND key = \(key) AND state = \(State.inFlight)
        AND (\(token)::timestamptz IS NULL OR created_at = \(token)::timestamptz)
      """)
  }

  package func removeExpired() async throws -> Int {
    try await database.execute(
      "DELETE FROM idempotency_keys WHERE created_at < now() - \(retentionHours)::int * interval '1 hour'"
    )
  }
}
