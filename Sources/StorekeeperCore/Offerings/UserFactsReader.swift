import Postgres

/// Reads what targeting rules may ask of a user, in one statement: their state (the same
/// `storekeeper_user_state` the entitlements answer and every event carry) and whether any
/// order or event of theirs exists, and whether one was ever paid. Called only when a rule
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
             EXISTS (SELECT 1 FROM orders WHERE user_id = \(userId) AND paid_at IS NOT NULL)
               AS has_paid,
             (EXISTS (SELECT 1 FROM orders WHERE user_id = \(userId))
              OR EXISTS (SELECT 1 FROM user_event_sequences WHERE user_id = \(userId))) AS known
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
