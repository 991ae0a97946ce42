import Postgres

/// Storefront prices: written like the product they belong to (row lock, revision bump, price
/// history, audit row, NOTIFY in the transaction), kept in a table of their own.
extension CatalogRepository {
  package func storefrontPrices(_ productId: String) async throws -> [StorefrontPrice] {
    try await database.query(
      """
      SELECT \(unescaped: StorefrontPrice.columns) FROM product_prices
      WHERE product_id = \(productId) ORDER BY storefront
      """
    ).map(StorefrontPrice.init(row:))
  }

  /// Sets the price of `productId` in `storefront` (alpha-3; price already normalised to the
  /// currency's exponent). Returns the price and whether it is new.
  package func setStorefrontPrice(
    productId: String, storefront: String, price: String, currency: String, by actor: AdminActor
  ) async throws -> (price: StorefrontPrice, created: Bool) {
    try await database.withTransaction { tx in
      let before = try await lockProduct(productId, storefront: storefront, on: tx)
      let rows = try await tx.query(
        """
        INSERT INTO product_prices (product_id, storefront, price, currency)
        VALUES (\(productId), \(storefront), \(price)::numeric, \(currency))
        ON CONFLICT (product_id, storefront) DO UPDATE SET
          price = EXCLUDED.price, currency = EXCLUDED.currency, updated_at = now()
        RETURNING \(unescaped: StorefrontPrice.columns)
        """)
      guard let row = rows.first else {
        throw PostgresError(kind: .decoding, message: "the price upsert returned no row")
      }
      let after = try StorefrontPrice(row: row)
      if before?.price != price || before?.currency != currency {
        try await tx.execute(
          """
          INSERT INTO product_price_history (product_id, storefront, old_price, old_currency,
                                             new_price, new_currency, changed_by)
          VALUES (\(productId), \(storefront), \(before?.price)::numeric, \(before?.currency),
                  \(price)::numeric, \(currency), \(actor.name))
          """)
        try await touch(productId, before: before, after: after, by: actor, on: tx)
      }
      return (after, before == nil)
    }
  }

  /// Removes the storefront's price: the product's default applies there again.
  package func removeStorefrontPrice(productId: String, storefront: String, by actor: AdminActor)
    async throws
  {
    try await database.withTransaction { tx in
      guard let before = try await lockProduct(productId, storefront: storefront, on: tx) else {
        throw OfferingRefusal.priceNotFound(productId: productId, storefront: storefront)
      }
      try await tx.execute(
        """
        DELETE FROM product_prices WHERE product_id = \(productId) AND storefront = \(storefront)
        """)
      try await tx.execute(
        """
        INSERT INTO product_price_history (product_id, storefront, old_price, old_currency,
                                           changed_by)
        VALUES (\(productId), \(storefront), \(before.price)::numeric, \(before.currency),
                \(actor.name))
        """)
      try await touch(productId, before: before, after: StorefrontPrice?.none, by: actor, on: tx)
    }
  }

  /// Locks the product (so its revision and its prices change together) and reads the
  /// storefront's current price; a product that does not exist is refused.
  private func lockProduct(_ productId: String, storefront: String, on tx: PostgresTransaction)
    async throws -> StorefrontPrice?
  {
    let found = try await tx.query(
      "SELECT 1 FROM products WHERE product_id = \(productId) FOR UPDATE")
    guard !found.isEmpty else { throw CatalogRefusal.productNotFound(productId) }
    return try await tx.query(
      """
      SELECT \(unescaped: StorefrontPrice.columns) FROM product_prices
      WHERE product_id = \(productId) AND storefront = \(storefront)
      """
    ).first.map(StorefrontPrice.init(row:))
  }

  /// A storefront price is part of the product: its revision (the admin ETag) moves, the audit
  /// trail records the price before and after, and every instance reloads.
  private func touch(
    _ productId: String, before: StorefrontPrice?, after: StorefrontPrice?, by actor: AdminActor,
    on tx: PostgresTransaction
  ) async throws {
    try await tx.execute(
      """
      UPDATE products SET revision = revision + 1, updated_at = now()
      WHERE product_id = \(productId)
      """)
    try await AuditLog.record(
      .productUpdated, by: actor, targetId: productId, before: before, after: after, on: tx)
    try await tx.execute("SELECT pg_notify(\(Self.channel), \(productId))")
  }
}
