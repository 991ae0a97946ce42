import Postgres

/// A catalog entry as stored, encoded whole for admins; `publicView` is what apps see.
struct Product: Encodable, Sendable, Equatable {
  var productId: String
  var type: ProductType
  var title: String
  var description: String
  var price: String
  var currency: String
  var sortOrder: Int32
  var active: Bool
  var grants: Grants
  var content: JSONValue
  var revision: Int64
  var createdAt: String
  var updatedAt: String

  enum CodingKeys: String, CodingKey {
    case productId = "product_id"
    case type, title, description, price, currency
    case sortOrder = "sort_order"
    case active, grants, content, revision
    case createdAt = "created_at"
    case updatedAt = "updated_at"
  }

  /// The admin ETag: strong, changes with every write.
  var etag: String { "\"p\(revision)\"" }

  static let columns = """
    product_id, type, title, description, price::text AS price, currency, sort_order, active,
    grants::text AS grants, content::text AS content, revision,
    \(SQLTime.rfc3339("created_at")), \(SQLTime.rfc3339("updated_at"))
    """

  init(row: PostgresRow) throws {
    productId = try row.decode("product_id")
    let typeName: String = try row.decode("type")
    type = ProductType(rawValue: typeName) ?? .consumable
    title = try row.decode("title")
    description = try row.decode("description")
    price = try row.decode("price")
    currency = try row.decode("currency")
    sortOrder = try row.decode("sort_order")
    active = try row.decode("active")
    grants = try JSONCoding.decode(Grants.self, fromText: try row.decode("grants"))
    content = try JSONCoding.decode(JSONValue.self, fromText: try row.decode("content"))
    revision = try row.decode("revision")
    createdAt = try row.decode("created_at")
    updatedAt = try row.decode("updated_at")
  }

  var publicView: PublicView {
    PublicView(
      productId: productId, type: type, title: title, description: description, price: price,
      currency: currency, sortOrder: sortOrder, grants: grants)
  }

  struct PublicView: Encodable, Sendable {
    var productId: String
    var type: ProductType
    var title: String
    var description: String
    var price: String
    var currency: String
    var sortOrder: Int32
    var grants: Grants

    enum CodingKeys: String, CodingKey {
      case productId = "product_id"
      case type, title, description, price, currency
      case sortOrder = "sort_order"
      case grants
    }
  }

}
