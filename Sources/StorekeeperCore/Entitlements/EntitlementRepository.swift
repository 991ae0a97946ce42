import Foundation
import Postgres

/// Derives what a user owns from the facts (ledger rows, paid orders, Apple transactions),
/// so a refund that flips an order or revokes a transaction is reflected with nothing to sync.
/// The derivation is one SQL function, `storekeeper_user_state` (Migrations/0019), which the
/// event outbox also records as each event's `user_state`: the answer here and the state an
/// event carries are computed by the same code.
package struct EntitlementRepository: Sendable {
  let database: PostgresPool
  let clock: WallClock

  package init(database: PostgresPool, clock: WallClock) {
    self.database = database
    self.clock = clock
  }

  package func view(userId: String) async throws -> Entitlements {
    let rows = try await database.query(
      """
      SELECT storekeeper_user_state(\(userId)::text, \(clock.now())::timestamptz)::text AS state
      """)
    // The function always answers one row; "{}" (none) would fail to decode, not pass silently.
    let state: String = try rows.first?.decode("state") ?? "{}"
    return try JSONCoding.decode(Entitlements.self, fromText: state)
  }
}
