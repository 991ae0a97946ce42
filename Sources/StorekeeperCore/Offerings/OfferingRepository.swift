import Postgres

/// Offerings and placements in PostgreSQL. Every write bumps the revision, records its audit
/// row and NOTIFYs the catalog channel inside its transaction, so every instance reloads the
/// served catalog (which holds them) exactly when the change commits.
package struct OfferingRepository: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  package func offerings() async throws -> [Offering] {
    try await database.query(
      "SELECT \(unescaped: Offering.columns) FROM offerings o ORDER BY o.offering_id"
    ).map(Offering.init(row:))
  }

  package func offering(_ id: String) async throws -> Offering? {
    try await database.query(
      "SELECT \(unescaped: Offering.columns) FROM offerings o WHERE o.offering_id = \(id)"
    ).first.map(Offering.init(row:))
  }

  package func placements() async throws -> [Placement] {
    try await database.query(
      "SELECT \(unescaped: Placement.columns) FROM placements ORDER BY placement_id"
    ).map(Placement.init(row:))
  }

  package func placement(_ id: String) async throws -> Placement? {
    try await database.query(
      "SELECT \(unescaped: Placement.columns) FROM placements WHERE placement_id = \(id)"
    ).first.map(Placement.init(row:))
  }

  /// Creates or replaces an offering with its products, in order. Products it names must
  /// exist (archived ones may: they are kept and not served until active again).
  package func write(_ draft: OfferingDraft, by actor: AdminActor) async throws
    -> (offering: Offering, created: Bool)
  {
    try await database.withTransaction { tx in
      let before = try await tx.query(
        """
        SELECT \(unescaped: Offering.columns) FROM offerings o
        WHERE o.offering_id = \(draft.offeringId) FOR UPDATE
        """
      ).first.map(Offering.init(row:))
      let ids = try JSONCoding.text(draft.items.map(\.productId))
      let missing = try await tx.query(
        """
        SELECT id FROM jsonb_array_elements_text(\(ids)::jsonb) AS wanted(id)
        WHERE NOT EXISTS (SELECT 1 FROM products p WHERE p.product_id = wanted.id FOR KEY SHARE)
        ORDER BY id
        """
      ).map { try $0.decode("id", as: String.self) }
      guard missing.isEmpty else { throw OfferingRefusal.unknownProducts(missing) }
      let metadata = try JSONCoding.text(draft.metadata)
      try await tx.execute(
        """
        INSERT INTO offerings (offering_id, title, badge, metadata)
        VALUES (\(draft.offeringId), \(draft.title), \(draft.badge), \(metadata)::jsonb)
        ON CONFLICT (offering_id) DO UPDATE SET
          title = EXCLUDED.title, badge = EXCLUDED.badge, metadata = EXCLUDED.metadata,
          revision = offerings.revision + 1, updated_at = now()
        """)
      let items = try JSONCoding.text(draft.items)
      try await tx.execute("DELETE FROM offering_products WHERE offering_id = \(draft.offeringId)")
      try await tx.execute(
        """
        INSERT INTO offering_products (offering_id, position, product_id, badge)
        SELECT \(draft.offeringId), (n - 1)::integer, item->>'product_id', item->>'badge'
        FROM jsonb_array_elements(\(items)::jsonb) WITH ORDINALITY AS x(item, n)
        """)
      guard
        let after = try await tx.query(
          """
          SELECT \(unescaped: Offering.columns) FROM offerings o
          WHERE o.offering_id = \(draft.offeringId)
          """
        ).first.map(Offering.init(row:))
      else { throw PostgresError(kind: .decoding, message: "the offering upsert left no row") }
      try await AuditLog.record(
        .offeringWritten, by: actor, targetId: draft.offeringId, before: before, after: after,
        on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(draft.offeringId))")
      return (after, before == nil)
    }
  }

  /// Removes an offering no placement, rule or unconcluded experiment names. The offering
  /// `default` may always go:
  /// what names it is then served the whole catalog again.
  package func removeOffering(_ id: String, by actor: AdminActor) async throws {
    try await database.withTransaction { tx in
      guard
        let before = try await tx.query(
          "SELECT \(unescaped: Offering.columns) FROM offerings o WHERE o.offering_id = \(id) FOR UPDATE"
        ).first.map(Offering.init(row:))
      else { throw OfferingRefusal.offeringNotFound(id) }
      // Placements are locked in one order so that a concurrent placement write waits here.
      let users = try await tx.query(
        """
        SELECT placement_id FROM placements
        WHERE offering_id = \(id)
           OR EXISTS (SELECT 1 FROM jsonb_array_elements(rules) r WHERE r->>'offering_id' = \(id))
        ORDER BY placement_id FOR UPDATE
        """
      ).map { try $0.decode("placement_id", as: String.self) }
      if let placement = users.first, id != OfferingDraft.catalogOfferingId {
        throw OfferingRefusal.offeringInUse(id, by: "placement \(placement)")
      }
      let experiments = try await tx.query(
        """
        SELECT experiment_id FROM experiments
        WHERE status <> 'concluded'
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(variants) v WHERE v->>'offering_id' = \(id))
        ORDER BY experiment_id FOR UPDATE
        """
      ).map { try $0.decode("experiment_id", as: String.self) }
      if let experiment = experiments.first, id != OfferingDraft.catalogOfferingId {
        throw OfferingRefusal.offeringInUse(id, by: "experiment \(experiment)")
      }
      try await tx.execute("DELETE FROM offerings WHERE offering_id = \(id)")
      try await AuditLog.record(
        .offeringDeleted, by: actor, targetId: id, before: before, after: Offering?.none, on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(id))")
    }
  }

  /// Creates or replaces a placement. Every offering it or its rules name must exist, but the
  /// catalog offering `default`, which needs no row.
  /// With `ifMatch` (the client's `If-Match`), only the version it names is replaced.
  package func writePlacement(
    _ placementId: String, offeringId: String, rules: [TargetingRule], ifMatch: String? = nil,
    by actor: AdminActor
  ) async throws -> (placement: Placement, created: Bool) {
    try await database.withTransaction { tx in
      let before = try await tx.query(
        """
        SELECT \(unescaped: Placement.columns) FROM placements
        WHERE placement_id = \(placementId) FOR UPDATE
        """
      ).first.map(Placement.init(row:))
      if let ifMatch {
        let tags = ifMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let before, tags.contains("*") || tags.contains(before.etag) else {
          throw OfferingRefusal.placementChanged(placementId)
        }
      }
      let named = Set([offeringId] + rules.map(\.offeringId))
        .subtracting([OfferingDraft.catalogOfferingId]).sorted()
      let ids = try JSONCoding.text(named)
      // FOR KEY SHARE: an offering cannot be removed while this placement is being written.
      let missing = try await tx.query(
        """
        SELECT id FROM jsonb_array_elements_text(\(ids)::jsonb) AS wanted(id)
        WHERE NOT EXISTS (SELECT 1 FROM offerings o WHERE o.offering_id = wanted.id FOR KEY SHARE)
        ORDER BY id
        """
      ).map { try $0.decode("id", as: String.self) }
      guard missing.isEmpty else {
        let fields =
          (missing.contains(offeringId) ? ["offering_id"] : [])
          + rules.indices.filter { missing.contains(rules[$0].offeringId) }
          .map { "rules[\($0)].offering_id" }
        throw OfferingRefusal.unknownOfferings(missing, fields: fields)
      }
      let rulesText = try JSONCoding.text(rules)
      let rows = try await tx.query(
        """
        INSERT INTO placements (placement_id, offering_id, rules)
        VALUES (\(placementId), \(offeringId), \(rulesText)::jsonb)
        ON CONFLICT (placement_id) DO UPDATE SET
          offering_id = EXCLUDED.offering_id, rules = EXCLUDED.rules,
          revision = placements.revision + 1, updated_at = now()
        RETURNING \(unescaped: Placement.columns)
        """)
      guard let row = rows.first else {
        throw PostgresError(kind: .decoding, message: "the placement upsert returned no row")
      }
      let after = try Placement(row: row)
      try await AuditLog.record(
        .placementWritten, by: actor, targetId: placementId, before: before, after: after, on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(placementId))")
      return (after, before == nil)
    }
  }

  /// Removes a placement no unconcluded experiment decides.
  package func removePlacement(_ id: String, by actor: AdminActor) async throws {
    try await database.withTransaction { tx in
      guard
        let before = try await tx.query(
          "SELECT \(unescaped: Placement.columns) FROM placements WHERE placement_id = \(id) FOR UPDATE"
        ).first.map(Placement.init(row:))
      else { throw OfferingRefusal.placementNotFound(id) }
      let experiments = try await tx.query(
        "SELECT experiment_id FROM experiments WHERE placement_id = \(id) ORDER BY experiment_id"
      ).map { try $0.decode("experiment_id", as: String.self) }
      if let experiment = experiments.first {
        throw OfferingRefusal.placementInUse(id, by: "experiment \(experiment)")
      }
      try await tx.execute("DELETE FROM placements WHERE placement_id = \(id)")
      try await AuditLog.record(
        .placementDeleted, by: actor, targetId: id, before: before, after: Placement?.none, on: tx)
      try await tx.execute("SELECT pg_notify(\(CatalogRepository.channel), \(id))")
    }
  }
}
