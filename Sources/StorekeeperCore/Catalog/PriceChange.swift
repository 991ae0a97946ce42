import Postgres

/// One entry of a product's price history.
package struct PriceChange: Encodable, Sendable {
  var id: Int64
  var oldPrice: String?
  var oldCurrency: String?
  var newPrice: String
  var newCurrency: String
  var changedBy: String
  var changedAt: String

  enum CodingKeys: String, CodingKey {
    case id
    case oldPrice = "old_price"
    case oldCurrency = "old_currency"
    case newPrice = "new_price"
    case newCurrency = "new_currency"
    case changedBy = "changed_by"
    case changedAt = "changed_at"
  }

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    oldPrice = try row.decodeIfPresent("old_price")
    oldCurrency = try row.decodeIfPresent("old_currency")
    newPrice = try row.decode("new_price")
    newCurrency = try row.decode("new_currency")
    changedBy = try row.decode("changed_by")
    changedAt = try row.decode("changed_at")
  }
}
