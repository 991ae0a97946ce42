import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Every versioned migration runs before any repeatable definition (`Migrator`), so what an
/// instance of the previous release writes between a backfill (0136's pauses, 0137's Google
/// lineage) and the creation of the trigger that keeps the same invariant is written without
/// it. The definition repairs it in the transaction that creates the trigger
/// (docs/DEPLOYMENT.md): here the trigger is dropped, the previous release's statements write,
/// and the release's definition is applied as an upgrade applies it.
@Suite(.serialized, .database) struct UpgradeWindowRepairTests {
  static let migrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Migrations").path

  /// Applies `name` as an upgrade does: this release's definition, not yet applied.
  static func applyDefinition(_ name: String, _ h: DomainHarness) async throws {
    try await h.database.execute("DELETE FROM schema_repeatables WHERE name = \(name)")
    let applied = try await Migrator(directory: migrations, logger: DomainHarness.logger)
      .migrate(h.database)
    #expect(applied == ["repeatable/" + name])
  }

  static func trigger(_ name: String, _ h: DomainHarness) async throws -> Bool {
    try await h.database.queryFirst(
      "SELECT count(*)::int AS n FROM pg_trigger WHERE tgname = \(name)")?.decode(
        "n", as: Int.self) == 1
  }

  // MARK: Google Play lineage (0137, google_lineage.sql)

  static func purchase(
    _ h: DomainHarness, _ token: String, order: String, linked: String? = nil,
    key: String? = nil
  ) async throws {
    try await h.database.execute(
      """
      INSERT INTO google_purchases (purchase_token, package_name, kind, product_id,
        google_product_id, order_id, quantity, environment, purchase_time, expiry_time,
        linked_purchase_token, original_transaction_id, user_id)
      VALUES (\(token), 'com.example', 'subscription', 'vip', 'vip', \(order), 1, 'Production',
        now(), now() + interval '30 days', \(linked), \(key), 'u1')
      """)
  }

  /// Each purchase's key and the transaction that last wrote it.
  static func keys(_ h: DomainHarness) async throws -> [String: String] {
    var keys: [String: String] = [:]
    for row in try await h.database.query(
      """
      SELECT purchase_token, coalesce(original_transaction_id, '-') AS key,
             chart_xid::text AS xid
      FROM google_purchases
      """)
    {
      keys[try row.decode("purchase_token")] =
        try row.decode("key", as: String.self) + "@" + row.decode("xid", as: String.self)
    }
    return keys
  }

  static func rollupsReset(_ h: DomainHarness) async throws -> Bool {
    try await h.database.queryFirst(
      "SELECT horizon IS NULL AND counts_horizon IS NULL AS reset FROM chart_rollup_state")?
      .decode("reset", as: Bool.self) == true
  }

  @Test func aPurchaseRecordedWithoutTheTriggerTakesItsLinesKey() async throws {
    try await DomainHarness.with { h in
      // The rollups were built: a pass keeps its horizons.
      try await h.database.execute(
        "UPDATE chart_rollup_state SET horizon = '1', counts_horizon = '1'")
      // Before the upgrade: tokA, replaced by tokB, which 0137's backfill gave tokA's key.
      try await Self.purchase(h, "tokA", order: "GPA.1111")
      try await Self.purchase(h, "tokB", order: "GPA.2222", linked: "tokA", key: "GPA.1111")
      // The window after 0137, the trigger not yet created: an instance of the previous
      // release records tokC replacing tokB, and tokG replacing tokF, whose order id Google did
      // not name (the token's digest is its key).
      try await h.database.execute("DROP TRIGGER google_purchases_lineage ON google_purchases")
      try await Self.purchase(h, "tokC", order: "GPA.3333", linked: "tokB")
      try await Self.purchase(h, "tokF", order: "tokF")
      try await Self.purchase(h, "tokG", order: "GPA.7777", linked: "tokF")
      // tokD replaced tokC once a trigger without the repair ran (a database upgraded to 0141):
      // it took tokC's own order id. tokE replaced a purchase Storekeeper never saw.
      try await Self.purchase(h, "tokD", order: "GPA.4444", linked: "tokC", key: "GPA.3333")
      try await Self.purchase(h, "tokE", order: "GPA.5555", linked: "unknown")

      try await Self.applyDefinition("google_lineage.sql", h)
      let digest = try #require(
        try await h.database.queryFirst("SELECT 'token:' || left(md5('tokF'), 16) AS key")?
          .decode("key", as: String.self))
      let repaired = try await Self.keys(h).mapValues { String($0.split(separator: "@")[0]) }
      #expect(
        repaired == [
          "tokA": "-", "tokB": "GPA.1111", "tokC": "GPA.1111", "tokD": "GPA.1111", "tokE": "-",
          "tokF": "-", "tokG": digest,
        ])
      // Their units moved: the next pass rebuilds the rollups.
      #expect(try await Self.rollupsReset(h))
      #expect(try await Self.trigger("google_purchases_lineage", h))

      // Applied again with nothing to repair: no row written, the rollups kept.
      try await h.database.execute(
        "UPDATE chart_rollup_state SET horizon = '1', counts_horizon = '1'")
      let before = try await Self.keys(h)
      try await Self.applyDefinition("google_lineage.sql", h)
      #expect(try await Self.keys(h) == before)
      #expect(try await !Self.rollupsReset(h))
      // And the trigger keeps the line from now on.
      try await Self.purchase(h, "tokH", order: "GPA.8888", linked: "tokD")
      #expect(try await Self.keys(h)["tokH"]?.hasPrefix("GPA.1111@") == true)
    }
  }

  // MARK: Experiment pauses (0136, experiment_pauses.sql)

  static let admin = AdminActor(name: "ops", requestId: "req", clientAddress: "127.0.0.1")

  /// When the admin log says `experiment` went from `from` to `to` (the time of the change).
  static func logged(_ h: DomainHarness, _ experiment: String, _ from: String, _ to: String)
    async throws -> String?
  {
    try await h.database.queryFirst(
      """
      SELECT created_at::text AS at FROM admin_audit
      WHERE target_id = \(experiment) AND before ->> 'status' = \(from)
        AND after ->> 'status' = \(to)
      ORDER BY id DESC LIMIT 1
      """)?.decode("at")
  }

  /// Each experiment's pauses, "paused_at..resumed_at" ("open" while it lasts).
  static func pauses(_ h: DomainHarness) async throws -> [String: [String]] {
    var pauses: [String: [String]] = [:]
    for row in try await h.database.query(
      """
      SELECT experiment_id, paused_at::text || '..' || coalesce(resumed_at::text, 'open') AS span
      FROM experiment_pauses ORDER BY experiment_id, paused_at
      """)
    {
      pauses[try row.decode("experiment_id"), default: []].append(try row.decode("span"))
    }
    return pauses
  }

  @Test func anExperimentResumedOrPausedWithoutTheTriggerHasItsPausesRepaired() async throws {
    try await DomainHarness.with { h in
      let experiments = ExperimentRepository(database: h.database, outbox: h.orders.outbox)
      for (placement, experiment) in [
        ("shop", "resumed"), ("store", "paused"), ("bank", "by_hand"),
      ] {
        try await h.database.execute(
          "INSERT INTO placements (placement_id, offering_id) VALUES (\(placement), 'default')")
        try await h.database.execute(
          """
          INSERT INTO experiments (experiment_id, placement_id, status, variants, attribution_hours)
          VALUES (\(experiment), \(placement), 'running', '[]', 24)
          """)
      }
      // Paused before the upgrade (the trigger, or 0136's snapshot, opened their pauses).
      _ = try await experiments.setRunning("resumed", false, by: Self.admin)
      _ = try await experiments.setRunning("by_hand", false, by: Self.admin)

      // The window after 0136, the trigger not yet created: an instance of the previous release
      // resumes one and pauses another (its statements are this release's, without the
      // trigger); an operator resumes the third by hand, leaving no admin log.
      try await h.database.execute("DROP TRIGGER experiments_pauses ON experiments")
      _ = try await experiments.setRunning("resumed", true, by: Self.admin)
      _ = try await experiments.setRunning("paused", false, by: Self.admin)
      try await h.database.execute(
        "UPDATE experiments SET status = 'running', updated_at = now() WHERE experiment_id = 'by_hand'"
      )
      let byHand = try #require(
        try await h.database.queryFirst(
          "SELECT updated_at::text AS at FROM experiments WHERE experiment_id = 'by_hand'"
        )?.decode("at", as: String.self))
      // Edited since: their last update is not the status change's time.
      try await h.database.execute(
        """
        UPDATE experiments SET attribution_hours = 48, updated_at = now() + interval '1 hour'
        WHERE experiment_id IN ('resumed', 'paused')
        """)

      try await Self.applyDefinition("experiment_pauses.sql", h)
      let pausedAt = try #require(try await Self.logged(h, "resumed", "running", "paused"))
      let resumedAt = try #require(try await Self.logged(h, "resumed", "paused", "running"))
      let pausedNow = try #require(try await Self.logged(h, "paused", "running", "paused"))
      let byHandPaused = try #require(try await Self.logged(h, "by_hand", "running", "paused"))
      let repaired = try await Self.pauses(h)
      #expect(
        repaired == [
          "resumed": ["\(pausedAt)..\(resumedAt)"],
          "paused": ["\(pausedNow)..open"],
          "by_hand": ["\(byHandPaused)..\(byHand)"],
        ])
      #expect(try await Self.trigger("experiments_pauses", h))

      // Applied again: nothing to repair.
      try await Self.applyDefinition("experiment_pauses.sql", h)
      #expect(try await Self.pauses(h) == repaired)
      // And the trigger keeps the pauses from now on.
      _ = try await experiments.setRunning("paused", true, by: Self.admin)
      let resumedNow = try #require(try await Self.logged(h, "paused", "paused", "running"))
      #expect(try await Self.pauses(h)["paused"] == ["\(pausedNow)..\(resumedNow)"])
    }
  }

  // MARK: Chart rollups passed by the previous release (0146, 0148)

  /// Some of what the rollups hold is computed in Swift, not in the repeatable SQL both
  /// releases read (0146's prorated refunds: ChartSQL+Refresh.swift): a pass by an instance of
  /// the previous release, during a rolling upgrade, rebuilds or recomputes units without it
  /// and moves `horizon` on, clearing a reset. It leaves `rollup_built_at` behind, which only
  /// this release writes, and the next pass of this release rebuilds every rollup.
  @Test func aPassOfThePreviousReleaseIsRedoneByTheNextPassWhole() async throws {
    try await DomainHarness.with { h in
      let rollup = ChartRollup(database: h.database)
      let first = try await rollup.refresh()
      #expect(first.units == nil)
      // This release's own passes go on incrementally.
      let kept = try await rollup.refresh()
      #expect(kept.units == 0)
      #expect(kept.generation == first.generation)

      // The previous release's pass, as its binary writes the state row: every horizon it
      // knows set to its snapshot's xmin, which a long transaction anywhere pins where this
      // release's last pass left it (so here: unchanged, the case a copy of the horizon missed,
      // seen in CI), and its own clock in built_at; nothing else.
      try await h.database.execute(
        """
        UPDATE chart_rollup_state
        SET horizon = horizon, counts_horizon = counts_horizon,
            payer_horizon = payer_horizon, cohort_horizon = cohort_horizon,
            as_of = date_trunc('hour', now(), 'UTC'), built_at = clock_timestamp(),
            pass_units = 0, full_build = false
        """)
      let redone = try await rollup.refresh()
      #expect(redone.units == nil, "a pass after the previous release's must rebuild")
      #expect(redone.generation == first.generation + 1)
      let full = try await h.database.queryFirst(
        "SELECT full_build FROM chart_rollup_state")?.decode("full_build", as: Bool.self)
      #expect(full == true)

      // Once: the passes after it are incremental again.
      let after = try await rollup.refresh()
      #expect(after.units == 0)
      #expect(after.generation == redone.generation)
    }
  }
}
