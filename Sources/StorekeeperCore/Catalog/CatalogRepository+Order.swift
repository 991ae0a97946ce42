import Postgres

/// One entry of a reorder: a product as the admin saw it.
package struct ProductPosition: Sendable, Equatable {
  package var productId: String
  package var revision: Int64

  package init(productId: String, revision: Int64) {
    self.productId = productId
    self.revision = revision
  }
}

extension CatalogRepository {
  /// The most products one reorder may list, so the most a catalog may hold for the console's
  /// moves (which send the whole list): ten times any catalog seen, and a body of about 350 KB
  /// at most, inside the server's 1 MiB.
  package static let maxReorderItems = 10_000
  /// The gap between neighbours' `sort_order` after a reorder, room for a product put between
  /// two by hand.
  package static let reorderStep: Int32 = 10

  /// Renumbers the whole catalog to `order` (`sort_order` 10, 20, 30…) in one transaction, so
  /// apps see the old order or the new one, never a mix. `order` names every product once, at
  /// the revision the admin saw: a product changed, added or removed since then throws 412 and
  /// nothing is written. Each product whose `sort_order` changes gets a new revision and an
  /// audit row, as a PATCH would; one NOTIFY has every instance reload.
  package func reorder(_ order: [ProductPosition], by actor: AdminActor) async throws -> [Product] {
    try await database.withTransaction { tx in
      // Locked in one order (by id), as every single-product write locks one row: no deadlock.
      let current = try await tx.query(
        "SELECT \(unescaped: Product.columns) FROM products ORDER BY product_id FOR UPDATE"
      ).map(Product.init(row:))
      let byId = Dictionary(current.map { ($0.productId, $0) }, uniquingKeysWith: { $1 })
      guard order.count == current.count,
        order.allSatisfy({ byId[$0.productId]?.revision == $0.revision })
      else { throw CatalogRefusal.orderStale }
      var changed = false
      for (index, position) in order.enumerated() {
        let wanted = Int32(index + 1) * Self.reorderStep
        guard let before = byId[position.productId], before.sortOrder != wanted else { continue }
        let rows = try await tx.query(
          """
          UPDATE products SET sort_order = \(wanted), revision = revision + 1, updated_at = now()
          WHERE product_id = \(position.productId)
          RETURNING \(unescaped: Product.columns)
          """)
        guard let row = rows.first else {
          throw PostgresError(kind: .decoding, message: "the reorder update returned no row")
        }
        try await AuditLog.record(
          .productUpdated, by: actor, targetId: position.productId, before: before,
          after: try Product(row: row), on: tx)
        changed = true
      }
      if changed { try await tx.execute("SELECT pg_notify(\(Self.channel), 'order')") }
      return try await tx.query(
        "SELECT \(unescaped: Product.columns) FROM products ORDER BY sort_order, product_id"
      ).map(Product.init(row:))
    }
  }
}
