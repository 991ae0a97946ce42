import Postgres

/// The one way events are written: `storekeeper_append_events` (Migrations/0019) called in the
/// transaction of the change, so an event commits exactly when its change does. It takes the
/// user's sequence row lock, numbers the events gap-free, attaches the user's whole state after
/// the change (the same function `GET /v1/users/{id}/entitlements` answers with) and adds the
/// `balance.changed` and `entitlement.*` events the change implied.
///
/// Order transitions append inside their own statement (`OrderRepository.transition`); every
/// other writer calls `append` on its transaction after its change, e.g. an admin adjustment:
/// `try await outbox.append([EventDraft(.adminAdjustment, ["admin": ...])], for: userId, on: tx)`.
package struct EventOutbox: Sendable {
  /// The time entitlements are judged at, the clock `EntitlementRepository` reads.
  let clock: WallClock

  package init(clock: WallClock) {
    self.clock = clock
  }

  /// Appends `events` for `userId`, then what the change did to the user's balances and
  /// entitlements; with no `events`, only that (a change with no event of its own, named by
  /// `cause`). One statement; returns how many events were written.
  @discardableResult
  func append(
    _ events: [EventDraft], for userId: String, cause: [String: JSONValue]? = nil,
    on executor: any PostgresExecutor
  ) async throws -> Int {
    var query: PostgresQuery = "SELECT "
    query.append(try call(user: "\(userId)::text", events: events, cause: cause))
    query.append(" AS written")
    let rows = try await executor.query(query)
    return Int(try rows.first?.decode("written", as: Int32.self) ?? 0)
  }

  /// The same for whoever owns the subscription `originalTransactionId` (the user of its
  /// latest transaction); nothing when nobody does yet.
  @discardableResult
  func append(
    _ events: [EventDraft], forSubscription originalTransactionId: String,
    cause: [String: JSONValue]? = nil, on executor: any PostgresExecutor
  ) async throws -> Int {
    let owner: PostgresQuery = """
      (SELECT user_id FROM apple_transactions
       WHERE original_transaction_id = \(originalTransactionId) AND user_id IS NOT NULL
       ORDER BY purchase_date DESC LIMIT 1)
      """
    var query: PostgresQuery = "SELECT "
    query.append(try call(user: "owner.user_id", events: events, cause: cause))
    query.append(" AS written FROM ")
    query.append(owner)
    query.append(" AS owner(user_id) WHERE owner.user_id IS NOT NULL")
    return Int(try await executor.query(query).first?.decode("written", as: Int32.self) ?? 0)
  }

  /// The call as an SQL expression, for a statement that appends beside its change: `user` is
  /// an expression yielding the user id.
  func call(user: PostgresQuery, events: [EventDraft], cause: [String: JSONValue]? = nil)
    throws -> PostgresQuery
  {
    let json = EventDraft.json(events)
    return try call(user: user, events: "\(json)::jsonb", cause: cause)
  }

  /// `events` is an expression yielding the JSON array of `{"type", "data"}`.
  func call(user: PostgresQuery, events: PostgresQuery, cause: [String: JSONValue]? = nil)
    throws -> PostgresQuery
  {
    let causeText = try cause.map { try JSONCoding.text(JSONValue.object($0)) }
    var query: PostgresQuery = "storekeeper_append_events("
    query.append(user)
    query.append(", ")
    query.append(events)
    query.append(", \(clock.now())::timestamptz, \(causeText)::jsonb)")
    return query
  }

  /// Locks the sequences of `users` in one order (creating them), for a transaction that will
  /// append for more than one user: two such transactions then wait instead of deadlocking.
  func lock(_ users: [String], on tx: PostgresTransaction) async throws {
    // Told apart by their bytes, as the database does (`UserId.key`): a `Set` of the strings
    // would merge canonically equal ids such as "jos\u{E9}" and "jose\u{301}", leaving one
    // of them to be locked later, out of order.
    var seen = Set<String>()
    let ids = try JSONCoding.text(users.filter { seen.insert(UserId.key($0)).inserted })
    try await tx.execute(
      """
      INSERT INTO user_event_sequences AS s (user_id, last_sequence)
      SELECT u, 0 FROM jsonb_array_elements_text(\(ids)::jsonb) AS u ORDER BY u
      ON CONFLICT (user_id) DO UPDATE SET last_sequence = s.last_sequence
      """)
  }

  /// Writes `entitlement.expired` for users whose entitlement ran out with nothing else
  /// happening to them: each user's state records its earliest expiry, and appending with no
  /// events of its own reports what lapsed and records the next one, so each expiry is written
  /// once. Safe with many instances (SKIP LOCKED). Returns how many events were written.
  package func sweepExpired(on database: PostgresPool, limit: Int = 500) async throws -> Int {
    let rows = try await database.query(
      """
      SELECT coalesce(sum(storekeeper_append_events(due.user_id, '[]'::jsonb,
                                                    \(clock.now())::timestamptz, NULL)), 0)::bigint
             AS written
      FROM (SELECT user_id FROM user_event_sequences
            WHERE next_expiry <= \(clock.now())::timestamptz
            ORDER BY user_id LIMIT \(limit) FOR UPDATE SKIP LOCKED) due
      """)
    return Int(try rows.first?.decode("written", as: Int64.self) ?? 0)
  }
}
