import Foundation
import Postgres

/// Products in PostgreSQL. Every write bumps the revision, keeps price history and NOTIFYs
/// `catalog` inside its transaction, so the notification is delivered only if it commits.
package struct CatalogRepository: Sendable {
  package static let channel = "catalog"

  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  func activeProducts() async throws -> [Product] {
    try await database.query(
      "SELECT \(unescaped: Product.columns) FROM products WHERE active ORDER BY sort_order, product_id"
    ).map(Product.init(row:))
  }

  package func allProducts() async throws -> [Product] {
    try await database.query(
      "SELECT \(unescaped: Product.columns) FROM products ORDER BY sort_order, product_id"
    ).map(Product.init(row:))
  }

  package func product(_ productId: String, on executor: (any PostgresExecutor)? = nil) async throws
    -> Product?
  {
    try await (executor ?? database).query(
      "SELECT \(unescaped: Product.columns) FROM products WHERE product_id = \(productId)"
    ).first.map(Product.init(row:))
  }

  package func priceHistory(_ productId: String) async throws -> [PriceChange] {
    try await database.query(
      """
      SELECT id, storefront, old_price::text AS old_price, old_currency, new_price::text AS new_price,
             new_currency, changed_by, \(unescaped: SQLTime.rfc3339("changed_at"))
      FROM product_price_history WHERE product_id = \(productId) ORDER BY id
      """
    ).map(PriceChange.init(row:))
  }

  /// Creates or replaces (PUT) or updates (PATCH, via `makeDraft`) a product in one
  /// transaction, with its audit row. `ifMatch` is the client's `If-Match`; a stale one
  /// throws 412, as `If-None-Match: *` (`ifNoneMatch`) does when the product exists.
  package func write(
    productId: String, ifMatch: String?, ifNoneMatch: String? = nil, by actor: AdminActor,
    makeDraft: @Sendable (Product?) throws -> ProductDraft
  ) async throws -> (product: Product, created: Bool) {
    try await database.withTransaction { tx in
      let current = try await tx.query(
        "SELECT \(unescaped: Product.columns) FROM products WHERE product_id = \(productId) FOR UPDATE"
      ).first.map(Product.init(row:))
      // The body is judged before the precondition, so an invalid one is 422 whatever If-Match says.
      let draft = try makeDraft(current)
      try Self.checkPrecondition(ifMatch, current: current)
      let createOnly = ifNoneMatch?.trimmingCharacters(in: .whitespaces) == "*"
      if let current, createOnly { throw CatalogRefusal.productExists(current.productId) }
      if let current, current.type != draft.type, try await Self.hasOrders(productId, on: tx) {
        throw CatalogRefusal.productTypeLocked(productId, current.type)
      }
      let grants = try JSONCoding.text(draft.grants)
      let content = try JSONCoding.text(draft.content)
      let rows: [PostgresRow]
      do {
        rows = try await tx.query(
          """
          INSERT INTO products (product_id, type, title, description, price, currency, sort_order,
                                active, grants, content, google_product_id, google_base_plan_id,
                                revision)
          VALUES (\(draft.productId), \(draft.type.rawValue), \(draft.title), \(draft.description),
                  \(draft.price)::numeric, \(draft.currency), \(draft.sortOrder), \(draft.active),
                  \(grants)::jsonb, \(content)::jsonb, \(draft.googleProductId),
                  \(draft.googleBasePlanId),
                  (SELECT coalesce(max(revision), 0) + 1 FROM product_tombstones
                   WHERE product_id = \(draft.productId)))
          ON CONFLICT (product_id) DO UPDATE SET
            type = EXCLUDED.type, title = EXCLUDED.title, description = EXCLUDED.description,
            price = EXCLUDED.price, currency = EXCLUDED.currency, sort_order = EXCLUDED.sort_order,
            active = EXCLUDED.active, grants = EXCLUDED.grants, content = EXCLUDED.content,
            google_product_id = EXCLUDED.google_product_id,
            google_base_plan_id = EXCLUDED.google_base_plan_id,
            revision = products.revision + 1, updated_at = now()
          -- Created by another admin since it was read (no row to lock then): create-only
          -- writes nothing.
          WHERE NOT \(createOnly)
          RETURNING \(unescaped: Product.columns)
          """)
      } catch let error as PostgresError where error.sqlState == PostgresError.uniqueViolation {
        // products_google_id: another product already goes by this id on Google Play.
        throw CatalogRefusal.googleProductIdTaken(draft.effectiveGoogleProductId)
      }
      guard let row = rows.first else {
        if createOnly { throw CatalogRefusal.productExists(productId) }
        throw PostgresError(kind: .decoding, message: "the product upsert returned no row")
      }
      let product = try Product(row: row)
      if current?.price != draft.price || current?.currency != draft.currency {
        try await tx.execute(
          """
          INSERT INTO product_price_history (product_id, old_price, old_currency, new_price,
                                             new_currency, changed_by)
          VALUES (\(productId), \(current?.price)::numeric, \(current?.currency),
                  \(draft.price)::numeric, \(draft.currency), \(actor.name))
          """)
      }
      try await AuditLog.record(
        current == nil ? .productCreated : .productUpdated, by: actor, targetId: productId,
        before: current, after: product, on: tx)
      try await tx.execute("SELECT pg_notify(\(Self.channel), \(productId))")
      return (product, current == nil)
    }
  }

  /// DELETE removes a product no order references, with its price history, and keeps its
  /// revision in `product_tombstones`; archiving one that was sold is `PATCH active=false`. The row lock makes a concurrent order wait (its
  /// foreign key check needs the row), so an order never points at a removed product.
  package func remove(productId: String, ifMatch: String?, by actor: AdminActor) async throws {
    try await database.withTransaction { tx in
      let current = try await tx.query(
        "SELECT \(unescaped: Product.columns) FROM products WHERE product_id = \(productId) FOR UPDATE"
      ).first.map(Product.init(row:))
      guard let current else { throw CatalogRefusal.productNotFound(productId) }
      try Self.checkPrecondition(ifMatch, current: current)
      guard try await !Self.hasOrders(productId, on: tx) else {
        throw CatalogRefusal.productHasOrders(productId)
      }
      try await tx.execute("DELETE FROM product_price_history WHERE product_id = \(productId)")
      try await tx.execute("DELETE FROM products WHERE product_id = \(productId)")
      // The id's next product continues from this revision: an ETag held from before the
      // delete never matches it.
      try await tx.execute(
        """
        INSERT INTO product_tombstones (product_id, revision) VALUES (\(productId), \(current.revision))
        ON CONFLICT (product_id) DO UPDATE SET revision = EXCLUDED.revision
        """)
      try await AuditLog.record(
        .productDeleted, by: actor, targetId: productId, before: current, after: Product?.none,
        on: tx)
      try await tx.execute("SELECT pg_notify(\(Self.channel), \(productId))")
    }
  }

  /// Whether the product was ever ordered or sold: an order, or a store purchase kept without
  /// one (seed 000's receipt posted without a user sells with no order), whose restores,
  /// transfers and refunds still read the product.
  private static func hasOrders(_ productId: String, on tx: PostgresTransaction) async throws
    -> Bool
  {
    try await !tx.query(
      """
      SELECT 1 WHERE EXISTS (SELECT 1 FROM orders WHERE product_id = \(productId))
        OR EXISTS (SELECT 1 FROM apple_transactions WHERE product_id = \(productId))
        OR EXISTS (SELECT 1 FROM google_purchases WHERE product_id = \(productId))
      """
    ).isEmpty
  }

  private static func checkPrecondition(_ ifMatch: String?, current: Product?) throws {
    guard let ifMatch else { return }
    let tags = ifMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let matches =
      if let current { tags.contains("*") || tags.contains(current.etag) } else { false }
    guard matches else { throw CatalogRefusal.preconditionFailed }
  }
}
