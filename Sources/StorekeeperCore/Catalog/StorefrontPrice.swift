import Postgres

/// A product's price in one storefront, which replaces its default price and currency there.
package struct StorefrontPrice: Encodable, Sendable, Equatable {
  package var productId: String
  /// ISO 3166-1 alpha-3 (`Storefront.canonical`).
  package var storefront: String
  package var price: String
  package var currency: String
  var updatedAt: String

  enum CodingKeys: String, CodingKey {
    case storefront, price, currency
    case updatedAt = "updated_at"
  }

  static let columns =
    "product_id, storefront, price::text AS price, currency, "
    + SQLTime.rfc3339("updated_at")

  init(row: PostgresRow) throws {
    productId = try row.decode("product_id")
    storefront = try row.decode("storefront")
    price = try row.decode("price")
    currency = try row.decode("currency")
    updatedAt = try row.decode("updated_at")
  }
}
