import Postgres
import StorekeeperLogging

/// The charts' rollups (Migrations/0046, 0080): `chart_hourly` and the per-user tables, kept
/// up by the leased background pass, which recomputes only what changed since its last
/// horizon (`refresh`), and rebuilt whole by `storekeeper charts-backfill` (`rebuild`). A pass
/// is exact up to `as_of`, the start of the hour it began in; what happened since is the
/// rollup's lag, which every chart answered from it shows.
package struct ChartRollup: Sendable {
  let database: PostgresPool
  /// The zone `payers` and `cohorts` are counted ahead in (`CHARTS_TIME_ZONE`): a pass that
  /// finds the counts kept in another rebuilds them in this one (Migrations/0119).
  let countsZone: String
  let logger: Logger

  package init(
    database: PostgresPool, countsZone: String = "UTC",
    logger: Logger = Logger(label: "chart-rollup")
  ) {
    self.database = database
    self.countsZone = countsZone
    self.logger = logger
  }

  /// What charts read now.
  package struct State: Sendable, Equatable {
    package var generation: Int64
    /// RFC 3339; nil before the first build.
    package var asOf: String?
    package var lagSeconds: Int64?
    package var buildMs: Int64?
    /// The zone the last pass counted `payers` and `cohorts` in.
    package var countsZone = "UTC"
  }

  package func state() async throws -> State {
    let row = try await database.queryFirst(
      """
      SELECT generation, \(unescaped: SQLTime.rfc3339("as_of")),
             floor(extract(epoch FROM now() - as_of))::bigint AS lag, build_ms, counts_zone
      FROM chart_rollup_state
      """)
    guard let row else { return State(generation: 0) }
    return State(
      generation: try row.decode("generation"), asOf: try row.decodeIfPresent("as_of"),
      lagSeconds: try row.decodeIfPresent("lag"), buildMs: try row.decodeIfPresent("build_ms"),
      countsZone: try row.decode("counts_zone"))
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

  /// What a pass did: the generation charts read after it, the `chart_hourly` rows it wrote,
  /// and the units it recomputed (nil for a whole rebuild, which recomputes every unit).
  package struct Pass: Sendable, Equatable {
    package var generation: Int64
    package var rows: Int64
    package var units: Int64?
    /// The zone the counts were kept in before this pass, when it rebuilt them in another.
    package var movedFrom: String? = nil
  }

  /// Rebuilds every rollup from the transactions as a new generation, in one transaction:
  /// `storekeeper charts-backfill`, and the first pass of a database that never had one.
  package func rebuild() async throws -> Pass {
    try await pass(whole: true)
  }

  /// The background pass: recomputes only the units written since the previous pass's
  /// horizon (a whole rebuild when there is none yet), in one transaction.
  package func refresh() async throws -> Pass {
    try await pass(whole: false)
  }

  func pass(whole: Bool) async throws -> Pass {
    let exemption = FeedExemption(database: database, logger: logger)
    let (done, exempt) = try await database.withTransaction { tx in
      // Passes take turns on the state row; readers never wait (they read committed rows).
      let state = try await tx.query(
        """
        SELECT generation, horizon::text AS horizon, as_of::text AS as_of,
               horizon = counts_horizon AND counts_zone = \(countsZone) AS payers_kept,
               built_at = rollup_built_at AS rollups_kept,
               CASE WHEN counts_horizon IS NOT NULL THEN counts_zone END AS counted_in
        FROM chart_rollup_state FOR UPDATE
        """
      ).first
      let current: Int64 = try state?.decode("generation") ?? 0
      let previous: String? = try state?.decodeIfPresent("horizon")
      let asOf: String? = try state?.decodeIfPresent("as_of")
      // The payer and cohort counts were kept by the last pass in this zone (not by an instance
      // of the release before Migrations/0119, nor in another zone): else only a rebuild makes
      // them exact again.
      let payersKept: Bool = try state?.decodeIfPresent("payers_kept") ?? false
      // The last pass was this release's (Migrations/0148): an instance of an older one, during
      // a rolling upgrade, computes units without what this release adds in Swift (0146's
      // prorated refunds) and stamps `built_at` without `rollup_built_at`, so its work is
      // redone whole. (Not the horizon: a long transaction anywhere pins it, and an older
      // pass would then leave it where this release's last one did.)
      let rollupsKept: Bool = try state?.decodeIfPresent("rollups_kept") ?? false
      // Where the counts were, if any pass kept them: a first pass moves nothing.
      let countedIn: String? = try state?.decodeIfPresent("counted_in")
      let movedFrom = countedIn.flatMap { $0 == countsZone ? nil : $0 }
      // The lock above gave this transaction its id; a pass writes no events, so the event
      // feed need not wait seconds or minutes for it.
      let exempt = await exemption.register(tx, reason: "chart rollup pass")
      // Taken before anything is read: whatever this pass's reads miss was written by a
      // transaction still running or not yet begun now, whose id is at or after this one.
      // (Without an answer, 0: the next pass re-reads everything, which is safe.)
      let horizon: String =
        try await tx.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon")
        .first?.decode("horizon") ?? "0"
      var done: Pass
      if let previous, let asOf, payersKept, rollupsKept, !whole {
        done = try await refresh(on: tx, generation: current, since: previous, asOf: asOf)
      } else {
        done = try await rebuild(on: tx, generation: current + 1)
        done.movedFrom = movedFrom
      }
      // payer_horizon and cohort_horizon tell the release before 0119 that the counts are
      // UTC's: set only when they are.
      let utcHorizon: String? = countsZone == "UTC" ? horizon : nil
      try await tx.execute(
        """
        UPDATE chart_rollup_state
        SET generation = \(done.generation), as_of = date_trunc('hour', now(), 'UTC'),
            built_at = clock_timestamp(), horizon = \(horizon)::xid8,
            counts_horizon = \(horizon)::xid8, payer_horizon = \(utcHorizon)::xid8,
            cohort_horizon = \(utcHorizon)::xid8,
            build_ms = floor(extract(epoch FROM clock_timestamp() - now()) * 1000)::bigint,
            pass_units = \(done.units), full_build = \(done.units == nil)
        """)
      // The same instant, marking the pass as this release's (a second clock_timestamp() in
      // the statement above would differ).
      try await tx.execute("UPDATE chart_rollup_state SET rollup_built_at = built_at")
      return (done, exempt)
    }
    if let exempt { await exemption.remove(exempt) }
    return done
  }

  func rebuild(on tx: PostgresTransaction, generation next: Int64) async throws -> Pass {
    // Before anything is counted: the statements below read the zone from the state row.
    try await tx.execute("UPDATE chart_rollup_state SET counts_zone = \(countsZone)")
    for table in [
      "chart_unit_hourly", "chart_payments", "chart_trials", "chart_customers",
      "chart_payer_counts", "chart_cohort_sizes", "chart_cohort_counts",
    ] {
      // DELETE, not TRUNCATE: charts go on reading the old rows until this commits.
      try await tx.execute(PostgresQuery(unsafeSQL: "DELETE FROM \(table)"))
    }
    try await tx.execute(ChartSQL.insertShares(generation: nil))
    let rows = try await tx.execute(ChartSQL.sumShares(generation: next))
    try await tx.execute("DELETE FROM chart_hourly WHERE generation < \(next)")
    try await tx.execute(ChartSQL.insertPayments(changed: false))
    try await tx.execute(ChartSQL.countAllPayers)
    try await tx.execute(ChartSQL.insertTrials(changed: false))
    try await tx.execute(ChartSQL.insertCustomers(changed: false))
    try await tx.execute(ChartSQL.countAllCohorts)
    // Every row is new: without statistics until autovacuum came by, the first charts read
    // them with plans made for empty tables (33 s instead of 0.2 for payers in bench/charts).
    for table in [
      "chart_hourly", "chart_unit_hourly", "chart_payments", "chart_trials", "chart_customers",
      "chart_payer_counts", "chart_cohort_sizes", "chart_cohort_counts",
    ] {
      try await tx.execute(PostgresQuery(unsafeSQL: "ANALYZE \(table)"))
    }
    return Pass(generation: next, rows: Int64(rows))
  }

  func refresh(
    on tx: PostgresTransaction, generation: Int64, since horizon: String, asOf: String
  ) async throws -> Pass {
    for query in ChartSQL.scratch { try await tx.execute(query) }
    let units = try await tx.execute(ChartSQL.changedUnits(horizon: horizon, asOf: asOf))
    guard units > 0 else { return Pass(generation: generation, rows: 0, units: 0) }
    try await tx.execute("ANALYZE chart_dirty")
    var rows = try await tx.execute(ChartSQL.removeShares(generation: generation))
    rows += try await tx.execute(ChartSQL.insertShares(generation: generation))
    // A key whose every share left (a period end that moved to another hour) is no row.
    try await tx.execute(
      PostgresQuery(
        unsafeSQL: "DELETE FROM chart_hourly WHERE generation = \(generation) AND "
          + ChartSQL.rollupMeasures.map { "\($0) = 0" }.joined(separator: " AND ")))
    // Payers: what the users of the changed payments counted in the periods they touch is
    // taken out, the payments replaced, and the same users and periods counted again.
    try await tx.execute(ChartSQL.insertPayments(changed: true, into: "chart_new_payments"))
    try await tx.execute(ChartSQL.dirtyPayers)
    try await tx.execute("ANALYZE chart_dirty_payers")
    try await tx.execute(ChartSQL.countDirtyPayers(sign: "-"))
    // Cohorts: what the users of the changed units and of the first transactions that may
    // move counted is taken out before their payments and customers are replaced, and their
    // recount put back after.
    try await tx.execute(ChartSQL.changedUsers)
    try await tx.execute(ChartSQL.dirtyCohortUsers)
    try await tx.execute(ChartSQL.countDirtyCohorts(sign: "-"))
    try await tx.execute(
      PostgresQuery(
        unsafeSQL: "DELETE FROM chart_payments WHERE \(ChartSQL.ofChangedUnits("chart_payments"))"))
    try await tx.execute("INSERT INTO chart_payments SELECT * FROM chart_new_payments")
    try await tx.execute(ChartSQL.countDirtyPayers(sign: ""))
    try await tx.execute("DELETE FROM chart_payer_counts WHERE payers = 0")
    try await tx.execute(
      PostgresQuery(
        unsafeSQL: "DELETE FROM chart_trials WHERE \(ChartSQL.ofChangedUnits("chart_trials"))"))
    try await tx.execute(ChartSQL.insertTrials(changed: true))
    try await tx.execute(
      "DELETE FROM chart_customers WHERE user_id IN (SELECT user_id FROM chart_dirty_users)")
    try await tx.execute(ChartSQL.insertCustomers(changed: true))
    try await tx.execute(ChartSQL.countDirtyCohorts(sign: ""))
    try await tx.execute("DELETE FROM chart_cohort_sizes WHERE customers = 0")
    try await tx.execute("DELETE FROM chart_cohort_counts WHERE payments = 0")
    return Pass(generation: generation, rows: Int64(rows), units: Int64(units))
  }
}
