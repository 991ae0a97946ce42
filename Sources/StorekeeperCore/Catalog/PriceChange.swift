import Postgres

/// One entry of a product's price history: of its default price (`storefront` nil) or of one
/// storefront's, where a removed storefront price has no new price.
package struct PriceChange: Encodable, Sendable {
  var id: Int64
  var storefront: String?
  var oldPrice: String?
  var oldCurrency: String?
  var newPrice: String?
  var newCurrency: String?
  var changedBy: String
  var changedAt: String

  enum CodingKeys: String, CodingKey {
    case id, storefront
    case oldPrice = "old_price"
    case oldCurrency = "old_currency"
    case newPrice = "new_price"
    case newCurrency = "new_currency"
    case changedBy = "changed_by"
    case changedAt = "changed_at"
  }

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    storefront = try row.decodeIfPresent("storefront")
    oldPrice = try row.decodeIfPresent("old_price")
    oldCurrency = try row.decodeIfPresent("old_currency")
    newPrice = try row.decodeIfPresent("new_price")
    newCurrency = try row.decodeIfPresent("new_currency")
    changedBy = try row.decode("changed_by")
    changedAt = try row.decode("changed_at")
  }
}
