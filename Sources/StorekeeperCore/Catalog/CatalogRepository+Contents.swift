import Postgres

extension CatalogRepository {
  /// Everything the served catalog holds, read in one repeatable-read transaction so that an
  /// offering never names a product the same reload did not see.
  func contents() async throws -> CatalogContents {
    try await database.withTransaction { tx in
      try await tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
      let products = try await tx.query(
        "SELECT \(unescaped: Product.columns) FROM products WHERE active ORDER BY sort_order, product_id"
      ).map(Product.init(row:))
      let prices = try await tx.query(
        """
        SELECT \(unescaped: StorefrontPrice.columns) FROM product_prices
        WHERE product_id IN (SELECT product_id FROM products WHERE active)
        ORDER BY product_id, storefront
        """
      ).map(StorefrontPrice.init(row:))
      let offerings = try await tx.query(
        "SELECT \(unescaped: Offering.columns) FROM offerings o ORDER BY o.offering_id"
      ).map(Offering.init(row:))
      let placements = try await tx.query(
        "SELECT \(unescaped: Placement.columns) FROM placements ORDER BY placement_id"
      ).map(Placement.init(row:))
      let experiments = try await tx.query(
        """
        SELECT \(unescaped: Experiment.columns) FROM experiments
        WHERE status <> 'concluded' ORDER BY experiment_id
        """
      ).map(Experiment.init(row:))
      return CatalogContents(
        products: products, prices: Dictionary(grouping: prices, by: \.productId),
        offerings: offerings, placements: placements, experiments: experiments)
    }
  }
}
