import Postgres

/// Experiments in PostgreSQL: created running, paused and resumed, concluded (the winner's
/// offering becomes the placement's, in the same transaction, with an `experiment.concluded`
/// event). Every write NOTIFYs the catalog channel, since the served catalog holds them.
package struct ExperimentRepository: Sendable {
  let database: PostgresPool
  let outbox: EventOutbox

  package init(database: PostgresPool, outbox: EventOutbox) {
    self.database = database
    self.outbox = outbox
  }

  /// The pseudo-user an experiment's own events are written for: one per experiment, so no
  /// real user's sequence is touched.
  package static func eventUser(_ experimentId: String) -> String { "experiment:" + experimentId }

  package func experiments() async throws -> [Experiment] {
    try await database.query(
      "SELECT \(unescaped: Experiment.columns) FROM experiments ORDER BY created_at DESC, experiment_id"
    ).map(Experiment.init(row:))
  }

  package func experiment(_ id: String) async throws -> Experiment? {
    try await database.query(
      "SELECT \(unescaped: Experiment.columns) FROM experiments WHERE experiment_id = \(id)"
    ).first.map(Experiment.init(row:))
  }

  package func create(
    experimentId: String, placementId: String, variants: [ExperimentVariant],
    attributionHours: Int, by actor: AdminActor
  ) async throws -> Experiment {
    try await database.withTransaction { tx in
      let placement = try await tx.query(
        "SELECT 1 FROM placements WHERE placement_id = \(placementId) FOR UPDATE")
      guard !placement.isEmpty else { throw OfferingRefusal.placementNotFound(placementId) }
      let ids = try JSONCoding.text(
        Set(variants.map(\.offeringId)).subtracting([OfferingDraft.catalogOfferingId]).sorted())
      let missing = try await tx.query(
        """
        SELECT id FROM jsonb_array_elements_text(\(ids)::jsonb) AS wanted(id)
        WHERE NOT EXISTS (SELECT 1 FROM offerings o WHERE o.offering_id = wanted.id FOR KEY SHARE)
        ORDER BY id
        """
      ).map { try $0.decode("id", as: String.self) }
      guard missing.isEmpty else {
        let fields = variants.indices.filter { missing.contains(variants[$0].offeringId) }
          .map { "variants[\($0)].offering_id" }
        throw OfferingRefusal.unknownOfferings(missing, fields: fields)
      }
      let running = try await tx.query(
        """
        SELECT experiment_id FROM experiments
        WHERE placement_id = \(placementId) AND status <> 'concluded'
        """
      ).first.map { try $0.decode("experiment_id", as: String.self) }
      if let running {
        throw OfferingRefusal.experimentAlreadyRunning(placement: placementId, experiment: running)
      }
      let variantsText = try JSONCoding.text(variants)
      let rows = try await tx.query(
        """
        INSERT INTO experiments (experiment_id, placement_id, status, variants, attribution_hours)
        VALUES (\(experimentId), \(placementId), 'running', \(variantsText)::jsonb,
                \(Int32(attributionHours)))
        ON CONFLICT (experiment_id) DO NOTHING
        RETURNING \(unescaped: Experiment.columns)
        """)
      guard let row = rows.first else {
        throw OfferingRefusal.experimentExists(experimentId)
      }
      let experiment = try Experiment(row: row)
      try await AuditLog.record(
        .experimentCreated, by: actor, targetId: experimentId, before: Experiment?.none,
        after: experiment, on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(experimentId))")
      return experiment
    }
  }

  /// Pauses (`running` false) or resumes a running or paused experiment; assignment is
  /// unchanged by either. Each pause is kept by the table's trigger (experiment_pauses.sql).
  package func setRunning(_ id: String, _ running: Bool, by actor: AdminActor) async throws
    -> Experiment
  {
    try await database.withTransaction { tx in
      let before = try await locked(id, on: tx)
      guard before.status != .concluded else {
        throw OfferingRefusal.experimentState(id, status: before.status.rawValue)
      }
      let status: ExperimentStatus = running ? .running : .paused
      let rows = try await tx.query(
        """
        UPDATE experiments SET status = \(status), revision = revision + 1, updated_at = now()
        WHERE experiment_id = \(id) RETURNING \(unescaped: Experiment.columns)
        """)
      guard let row = rows.first else { throw OfferingRefusal.experimentNotFound(id) }
      let after = try Experiment(row: row)
      try await AuditLog.record(
        .experimentUpdated, by: actor, targetId: id, before: before, after: after, on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(id))")
      return after
    }
  }

  /// Ends the experiment: the winner's offering becomes the placement's, and
  /// `experiment.concluded` is written (a webhook event) with each variant's results.
  package func conclude(_ id: String, winner: String, by actor: AdminActor) async throws
    -> Experiment
  {
    try await database.withTransaction { tx in
      // The winner's offering is kept (key share) from before the experiment is locked, the
      // order a removal of it takes them in: a removal that had already passed its placements
      // check would otherwise go on once this commits, and leave the placement naming nothing.
      try await tx.execute(
        """
        SELECT 1 FROM offerings o
        WHERE o.offering_id = (SELECT v->>'offering_id' FROM experiments e,
                                 jsonb_array_elements(e.variants) v
                               WHERE e.experiment_id = \(id) AND v->>'variant' = \(winner))
        FOR KEY SHARE
        """)
      let before = try await locked(id, on: tx)
      guard before.status != .concluded else {
        throw OfferingRefusal.experimentState(id, status: before.status.rawValue)
      }
      guard let variant = before.variants.first(where: { $0.variant == winner }) else {
        throw OfferingRefusal.unknownVariant(winner)
      }
      let results = try await Self.results(before, on: tx)
      // The placement's own history says what it served before the winner, as an admin's
      // write of it would.
      let placementBefore = try await tx.query(
        """
        SELECT \(unescaped: Placement.columns) FROM placements
        WHERE placement_id = \(before.placementId) FOR UPDATE
        """
      ).first.map(Placement.init(row:))
      let placementAfter = try await tx.query(
        """
        UPDATE placements SET offering_id = \(variant.offeringId), revision = revision + 1,
                              updated_at = now()
        WHERE placement_id = \(before.placementId)
        RETURNING \(unescaped: Placement.columns)
        """
      ).first.map(Placement.init(row:))
      try await AuditLog.record(
        .placementWritten, by: actor, targetId: before.placementId, before: placementBefore,
        after: placementAfter, on: tx)
      let rows = try await tx.query(
        """
        UPDATE experiments SET status = 'concluded', winner = \(winner), concluded_at = now(),
                               revision = revision + 1, updated_at = now()
        WHERE experiment_id = \(id) RETURNING \(unescaped: Experiment.columns)
        """)
      guard let row = rows.first else { throw OfferingRefusal.experimentNotFound(id) }
      let after = try Experiment(row: row)
      let summary = try JSONCoding.decode(
        JSONValue.self, fromText: try JSONCoding.text(results))
      try await outbox.append(
        [
          EventDraft(
            .experimentConcluded,
            [
              "experiment_id": .string(id), "placement_id": .string(before.placementId),
              "winner": .string(winner), "offering_id": .string(variant.offeringId),
              "results": summary,
            ])
        ], for: Self.eventUser(id), on: tx)
      try await AuditLog.record(
        .experimentConcluded, by: actor, targetId: id, before: before, after: after, on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(id))")
      return after
    }
  }

  package func results(_ experiment: Experiment) async throws -> [VariantResult] {
    try await Self.results(experiment, on: database)
  }

  private func locked(_ id: String, on tx: PostgresTransaction) async throws -> Experiment {
    guard
      let experiment = try await tx.query(
        "SELECT \(unescaped: Experiment.columns) FROM experiments WHERE experiment_id = \(id) FOR UPDATE"
      ).first.map(Experiment.init(row:))
    else { throw OfferingRefusal.experimentNotFound(id) }
    return experiment
  }

  /// Each variant's numbers from the raw rows: exposures, and the paid orders (not sandbox, not
  /// an admin's transfer, which re-pays a purchase already counted, not a Family Sharing copy,
  /// which its purchaser paid) of each exposed user: those
  /// made from the variant's offering (`order_offerings`) after the exposure, and those that
  /// name no offering, paid from the first exposure to `attribution_hours` after it and before
  /// the experiment was concluded (the winner's offering is everyone's from then); either way
  /// only when the original purchase was made at or after the exposure (a restore, a renewal,
  /// or an "already owned" answer paying a tagged order, of what was bought before is no
  /// conversion). Money is what the store signed as paid, as the charts count it; an order the
  /// store priced nowhere counts at the catalog's price it was made at.
  static func results(_ experiment: Experiment, on executor: any PostgresExecutor) async throws
    -> [VariantResult]
  {
    let hours = Int32(experiment.attributionHours)
    let price = StorePrice.join(tradeNo: "a.trade_no", transferred: "a.transferred", as: "sp")
    let rows = try await executor.query(
      """
      WITH exposed AS (
        SELECT variant, user_id, exposed_at FROM experiment_exposures
        WHERE experiment_id = \(experiment.experimentId)),
      candidates AS (
        -- An order made from this experiment's offering counts for the variant it names, at
        -- any time after the exposure.
        SELECT e.variant, e.user_id, e.exposed_at, o.trade_no, o.currency, o.amount,
               o.close_reason, o.paid_at, true AS tagged
        FROM exposed e
        JOIN order_offerings x ON x.experiment_id = \(experiment.experimentId)
          AND x.variant = e.variant
        JOIN orders o ON o.trade_no = x.trade_no AND o.user_id = e.user_id
          AND o.paid_at IS NOT NULL AND o.environment IS DISTINCT FROM 'Sandbox'
          AND o.origin <> 'transfer'
          -- Made after the user was shown the variant: an order the hash tagged before any
          -- exposure (a paywall seen signed out) was not made from the experiment.
          AND o.created_at >= e.exposed_at
        UNION ALL
        -- An order that names no offering, by the window after the first exposure; one that
        -- names another offering was not made from this experiment.
        SELECT e.variant, e.user_id, e.exposed_at, o.trade_no, o.currency, o.amount,
               o.close_reason, o.paid_at, false AS tagged
        FROM exposed e
        JOIN orders o ON o.user_id = e.user_id AND o.paid_at IS NOT NULL
          AND o.paid_at >= e.exposed_at
          AND o.paid_at < e.exposed_at + make_interval(hours => \(hours))
          AND o.paid_at < coalesce(\(experiment.concludedAt)::timestamptz, 'infinity')
          AND o.environment IS DISTINCT FROM 'Sandbox' AND o.origin <> 'transfer'
          -- Nor while the experiment was paused: everyone was offered the placement's own.
          AND NOT EXISTS (SELECT 1 FROM experiment_pauses p
                          WHERE p.experiment_id = \(experiment.experimentId)
                            AND o.paid_at >= p.paused_at
                            AND o.paid_at < coalesce(p.resumed_at, 'infinity'))
        WHERE NOT EXISTS (SELECT 1 FROM order_offerings x WHERE x.trade_no = o.trade_no)),
      attributed AS (
        SELECT c.variant, c.user_id, c.trade_no, c.currency, c.amount,
               storekeeper_order_refunded(c.trade_no, c.close_reason::text) AS refunded,
               c.close_reason = 'transferred' AS transferred
        FROM candidates c
        -- An order whose purchase an admin moved away no longer holds it: its transfer's
        -- event names what it paid with.
        LEFT JOIN LATERAL (
          SELECT v.detail ->> 'transaction_id' AS id FROM order_events v
          WHERE c.close_reason = 'transferred' AND v.trade_no = c.trade_no
            AND v.detail ? 'transaction_id'
          ORDER BY v.id DESC LIMIT 1) moved ON true
        WHERE NOT storekeeper_paid_by_family_copy(c.trade_no, c.close_reason::text)
          -- Either way, only a purchase made at or after the exposure is a conversion, when
          -- the store says it was made, not when Storekeeper recorded it; the order's payment
          -- when no store row exists. Each is found by a unique or indexed key.
          AND CASE WHEN c.tagged
                -- A tagged order: the purchase that paid it (StoreKit can answer "already
                -- owned" with a transaction bought before the exposure; a resubscription is a
                -- new purchase of an old subscription, and counts).
                THEN coalesce(
                  (SELECT min(t.purchase_date) FROM apple_transactions t
                   WHERE t.trade_no = c.trade_no OR t.transaction_id = moved.id),
                  (SELECT min(g.purchased_at) FROM google_orders g
                   WHERE g.trade_no = c.trade_no OR g.order_id = moved.id),
                  c.paid_at)
                -- An untagged one, by the window: the earliest transaction Storekeeper holds of
                -- the same original transaction (App Store), or the purchase token's first
                -- order (Google Play), so a restore or a renewal of what was bought before is
                -- no conversion.
                ELSE coalesce(
                  (SELECT min(s.purchase_date) FROM apple_transactions t
                   JOIN apple_transactions s ON s.original_transaction_id = t.original_transaction_id
                   WHERE t.trade_no = c.trade_no OR t.transaction_id = moved.id),
                  (SELECT gp.purchase_time FROM google_orders g
                   JOIN google_purchases gp ON gp.purchase_token = g.purchase_token
                   WHERE g.trade_no = c.trade_no OR g.order_id = moved.id),
                  c.paid_at) END >= c.exposed_at),
      priced AS (
        -- What the buyer paid, as the store signed it (the charts' price, `StorePrice`), else
        -- the order's own amount. A purchase an admin moved away (either store's) belongs to
        -- the transfer's order now; the order that bought it names it in its transfer's event.
        SELECT a.variant, a.user_id, a.refunded,
               coalesce(sp.currency, a.currency::text) AS currency,
               coalesce(sp.price, a.amount) AS amount
        FROM attributed a
        \(unescaped: price)),
      counts AS (
        SELECT variant, count(*) AS exposed FROM exposed GROUP BY variant),
      paid AS (
        SELECT variant, count(DISTINCT user_id) AS payers, count(*) AS orders,
               count(*) FILTER (WHERE refunded) AS refunds
        FROM priced GROUP BY variant),
      money AS (
        SELECT variant, jsonb_object_agg(currency, trim_scale(gross)::text) AS revenue,
               jsonb_object_agg(currency, trim_scale(refunded)::text) FILTER (WHERE refunded > 0)
                 AS refunded
        FROM (SELECT variant, currency, sum(amount) AS gross,
                     coalesce(sum(amount) FILTER (WHERE refunded), 0) AS refunded
              FROM priced GROUP BY variant, currency) m
        GROUP BY variant)
      SELECT c.variant, c.exposed, coalesce(p.payers, 0) AS payers,
             coalesce(p.orders, 0) AS orders, coalesce(p.refunds, 0) AS refunds,
             coalesce(m.revenue, '{}')::text AS revenue, coalesce(m.refunded, '{}')::text AS refunded
      FROM counts c LEFT JOIN paid p USING (variant) LEFT JOIN money m USING (variant)
      """)
    var byVariant: [String: PostgresRow] = [:]
    for row in rows { byVariant[try row.decode("variant")] = row }
    return try experiment.variants.map { variant in
      let row = byVariant[variant.variant]
      let exposed: Int64 = try row?.decode("exposed") ?? 0
      let payers: Int64 = try row?.decode("payers") ?? 0
      let revenue = try amounts(row, "revenue")
      let interval = VariantResult.wilson(successes: payers, trials: exposed)
      return VariantResult(
        variant: variant.variant, offeringId: variant.offeringId, weight: variant.weight,
        exposed: exposed, payers: payers, orders: try row?.decode("orders") ?? 0,
        conversion: exposed > 0 ? Double(payers) / Double(exposed) : 0,
        conversionLow: interval.low, conversionHigh: interval.high, revenue: revenue,
        revenuePerExposed: revenue.mapValues { perUser($0, exposed) },
        refunds: try row?.decode("refunds") ?? 0,
        refunded: try amounts(row, "refunded"))
    }
  }

  /// A column of amounts by currency, each written with at least its currency's fraction
  /// digits: the store's prices are exact to a thousandth (App Store) or a millionth (Google
  /// Play), so the sum is trimmed in SQL and padded back here ("6" → "6.00").
  private static func amounts(_ row: PostgresRow?, _ column: String) throws -> [String: String] {
    guard let row else { return [:] }
    let sums = try JSONCoding.decode([String: String].self, fromText: try row.decode(column))
    var padded: [String: String] = [:]
    for (currency, text) in sums {
      padded[currency] = Money.padded(text, exponent: Currency.exponent(of: currency) ?? 0)
    }
    return padded
  }

  /// A decimal amount over a count, to 4 decimals (half up), without floating point; the
  /// amount may carry more digits (a Google Play price in micros).
  static func perUser(_ amount: String, _ users: Int64) -> String {
    let fraction = amount.split(separator: ".", maxSplits: 1).dropFirst().first?.count ?? 0
    let exponent = max(4, fraction)
    guard users > 0, exponent <= 6, let units = try? Money.minorUnits(amount, exponent: exponent)
    else { return "0" }
    var divisor = users
    for _ in 4..<exponent { divisor *= 10 }
    let quotient = (units + divisor / 2) / divisor
    return Money.format(minorUnits: quotient, exponent: 4)
  }
}
