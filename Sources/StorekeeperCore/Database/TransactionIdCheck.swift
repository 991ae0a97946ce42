import Postgres

/// Checks, before Storekeeper serves or migrates a database, that no `xid8` it stored is at or
/// past the cluster's next transaction id (`TransactionIdsAhead` says why that matters). On a
/// cluster that wrote them this cannot happen: each value is the id of a transaction that
/// committed (`events.xid`, `chart_xid`) or a snapshot's xmin (the rollup's horizons), all
/// below the next id. Physical backups, replicas and `pg_upgrade` keep the counter.
package enum TransactionIdCheck {
  /// Every place Storekeeper keeps an `xid8`, with the statement that finds its highest value
  /// (through the column's index: backwards, so it reads one entry).
  static let places: [(place: String, highest: String)] = [
    ("events.xid", "SELECT xid FROM events ORDER BY xid DESC LIMIT 1"),
    (
      "apple_transactions.chart_xid",
      "SELECT chart_xid FROM apple_transactions WHERE chart_xid IS NOT NULL ORDER BY chart_xid DESC LIMIT 1"
    ),
    (
      "google_purchases.chart_xid",
      "SELECT chart_xid FROM google_purchases WHERE chart_xid IS NOT NULL ORDER BY chart_xid DESC LIMIT 1"
    ),
    (
      "subscription_states.chart_xid",
      "SELECT chart_xid FROM subscription_states WHERE chart_xid IS NOT NULL ORDER BY chart_xid DESC LIMIT 1"
    ),
    (
      "google_orders.chart_xid",
      "SELECT chart_xid FROM google_orders WHERE chart_xid IS NOT NULL ORDER BY chart_xid DESC LIMIT 1"
    ),
    (
      "chart_rollup_state.horizon",
      "SELECT greatest(horizon, payer_horizon, cohort_horizon, counts_horizon) FROM chart_rollup_state"
    ),
  ]

  /// Throws `TransactionIdsAhead` naming every place ahead. Taking no transaction id itself
  /// (`pg_current_snapshot`, not `pg_current_xact_id`), it moves nothing it compares. A schema
  /// too old to have these tables and columns (a `serve --no-migrate` ahead of `migrate`) is
  /// not checked: the migration that follows runs it.
  package static func verify(_ database: PostgresPool) async throws {
    // Built from the constants above only: no value from outside reaches this text.
    let values = places.map { "('\($0.place)', (\($0.highest)))" }.joined(separator: ",\n")
    let rows: [PostgresRow]
    do {
      rows = try await database.query(
        PostgresQuery(
          unsafeSQL: """
            SELECT n.next::text AS next, s.place, s.highest::text AS highest
            FROM (SELECT pg_snapshot_xmax(pg_current_snapshot()) AS next) n,
                 (VALUES \(values)) AS s(place, highest)
            WHERE s.highest >= n.next
            ORDER BY s.highest DESC, s.place
            """))
    } catch let error as PostgresError
      where error.sqlState == PostgresError.undefinedTable
      || error.sqlState == PostgresError.undefinedColumn
    {
      return
    }
    guard let first = rows.first else { return }
    throw TransactionIdsAhead(
      ahead: try rows.map {
        (try $0.decode("place", as: String.self), try $0.decode("highest", as: String.self))
      },
      next: try first.decode("next", as: String.self))
  }
}
