import Postgres

/// Reads what targeting rules may ask of a user, in one statement: their state (the same
/// `storekeeper_user_state` the entitlements answer and every event carry), whether they are
/// known (an order, a ledger row, or an event other than `experiment.exposed` of theirs
/// exists), and whether an order was ever paid. Called only when a rule
/// that could match has conditions on the user.
package struct UserFactsReader: Sendable {
  let database: PostgresPool
  let clock: WallClock

  package init(database: PostgresPool, clock: WallClock) {
    self.database = database
    self.clock = clock
  }

  package func facts(_ userId: String) async throws -> UserFacts {
    let rows = try await database.query(
      """
      SELECT storekeeper_user_state(\(userId)::text, \(clock.now())::timestamptz)::text AS state,
             -- A Family Sharing copy is access, not a payment of this user's.
             EXISTS (SELECT 1 FROM orders o WHERE o.user_id = \(userId) AND o.paid_at IS NOT NULL
                       AND NOT storekeeper_paid_by_family_copy(o.trade_no, o.close_reason::text))
               AS has_paid,
             (EXISTS (SELECT 1 FROM orders WHERE user_id = \(userId))
              OR EXISTS (SELECT 1 FROM ledger WHERE user_id = \(userId))
              -- Being shown an offering writes experiment.exposed: reading an offering must not
              -- make a new user a returning one. The user's events through their
              -- (user_id, sequence) key, stopping at the first of another type.
              OR EXISTS (SELECT 1 FROM events WHERE user_id = \(userId)
                           AND type <> \(EventType.experimentExposed.rawValue))) AS known
      """)
    guard let row = rows.first else { return .unknown }
    let state = try JSONCoding.decode(Entitlements.self, fromText: try row.decode("state"))
    let hasPaid: Bool = try row.decode("has_paid")
    let known: Bool = try row.decode("known")
    return UserFacts(
      isKnown: known || hasPaid, hasPaid: hasPaid,
      entitlements: Set(state.entitlements.map(\.entitlement)), balances: state.balances)
  }
}
