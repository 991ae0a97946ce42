/// Everything an instance serves apps from memory, read in one reload: the active products,
/// their storefront prices, the offerings, the placements and the experiments that decide them.
/// The edge encodes it once per change (`CatalogCache`).
package struct CatalogContents: Sendable {
  /// Active products in catalog order.
  package var products: [Product]
  /// Storefront prices of the active products, by product id.
  package var prices: [String: [StorefrontPrice]]
  package var offerings: [Offering]
  package var placements: [Placement]
  /// Experiments not concluded (running or paused), at most one per placement.
  package var experiments: [Experiment]

  package init(
    products: [Product], prices: [String: [StorefrontPrice]] = [:], offerings: [Offering] = [],
    placements: [Placement] = [], experiments: [Experiment] = []
  ) {
    self.products = products
    self.prices = prices
    self.offerings = offerings
    self.placements = placements
    self.experiments = experiments
  }

  package static let empty = CatalogContents(products: [])
}
