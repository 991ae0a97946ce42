import Postgres

/// The hourly rollups of `chart_hourly` (Migrations/0046): rebuilt whole, as one new
/// generation, by the leased background pass and by `storekeeper charts-backfill`. A rebuild
/// is exact up to `as_of`, the start of the hour it began in; what happened since is the
/// rollup's lag, which every chart answered from it shows.
package struct ChartRollup: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  /// What charts read now.
  package struct State: Sendable, Equatable {
    package var generation: Int64
    /// RFC 3339; nil before the first build.
    package var asOf: String?
    package var lagSeconds: Int64?
    package var buildMs: Int64?
  }

  package func state() async throws -> State {
    let row = try await database.queryFirst(
      """
      SELECT generation, \(unescaped: SQLTime.rfc3339("as_of")),
             floor(extract(epoch FROM now() - as_of))::bigint AS lag, build_ms
      FROM chart_rollup_state
      """)
    guard let row else { return State(generation: 0) }
    return State(
      generation: try row.decode("generation"), asOf: try row.decodeIfPresent("as_of"),
      lagSeconds: try row.decodeIfPresent("lag"), buildMs: try row.decodeIfPresent("build_ms"))
  }

  /// Takes the lease for the next build when it is due (`intervalMs` after the last build's
  /// lease was taken) and free: one instance builds, the others skip. The lease outlives a
  /// crashed builder by `intervalMs` at most.
  package func claim(intervalMs: Int64) async throws -> Bool {
    try await database.queryFirst(
      """
      UPDATE chart_rollup_state
      SET lease_until = now() + \(intervalMs)::bigint * interval '1 millisecond'
      WHERE lease_until <= now()
      RETURNING true AS claimed
      """) != nil
  }

  /// Builds the next generation in one transaction and makes it the one charts read; the
  /// previous generation goes with it. Returns the new state's generation and its row count.
  package func rebuild() async throws -> (generation: Int64, rows: Int64) {
    try await database.withTransaction { tx in
      // Builders take turns on the state row; readers never wait (they read a generation).
      let current: Int64 =
        try await tx.query("SELECT generation FROM chart_rollup_state FOR UPDATE").first?
        .decode("generation") ?? 0
      let next = current + 1
      let inserted = try await tx.execute(ChartSQL.rebuild(generation: next))
      try await tx.execute(
        """
        UPDATE chart_rollup_state
        SET generation = \(next), as_of = date_trunc('hour', now()), built_at = clock_timestamp(),
            build_ms = floor(extract(epoch FROM clock_timestamp() - now()) * 1000)::bigint
        """)
      try await tx.execute("DELETE FROM chart_hourly WHERE generation < \(next)")
      return (next, Int64(inserted))
    }
  }
}
