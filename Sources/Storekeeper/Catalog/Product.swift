import Postgres

/// A catalog entry as stored: what an admin edits (`draft`) plus its bookkeeping. Encoded whole
/// for admins; `publicView` is what apps see. Fields of the draft read as the product's own.
@dynamicMemberLookup
struct Product: Encodable, Sendable, Equatable {
  var draft: ProductDraft
  var revision: Int64
  var createdAt: String
  var updatedAt: String

  subscript<T>(dynamicMember keyPath: KeyPath<ProductDraft, T>) -> T { draft[keyPath: keyPath] }

  enum CodingKeys: String, CodingKey {
    case productId = "product_id"
    case type, title, description, price, currency
    case sortOrder = "sort_order"
    case active, grants, content, revision
    case createdAt = "created_at"
    case updatedAt = "updated_at"
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(draft.productId, forKey: .productId)
    try container.encode(draft.type, forKey: .type)
    try container.encode(draft.title, forKey: .title)
    try container.encode(draft.description, forKey: .description)
    try container.encode(draft.price, forKey: .price)
    try container.encode(draft.currency, forKey: .currency)
    try container.encode(draft.sortOrder, forKey: .sortOrder)
    try container.encode(draft.active, forKey: .active)
    try container.encode(draft.grants, forKey: .grants)
    try container.encode(draft.content, forKey: .content)
    try container.encode(revision, forKey: .revision)
    try container.encode(createdAt, forKey: .createdAt)
    try container.encode(updatedAt, forKey: .updatedAt)
  }

  /// The admin ETag: strong, changes with every write.
  var etag: String { "\"p\(revision)\"" }

  static let columns = """
    product_id, type, title, description, price::text AS price, currency, sort_order, active,
    grants::text AS grants, content::text AS content, revision,
    \(SQLTime.rfc3339("created_at")), \(SQLTime.rfc3339("updated_at"))
    """

  init(row: PostgresRow) throws {
    let typeName: String = try row.decode("type")
    draft = ProductDraft(
      productId: try row.decode("product_id"), type: ProductType(rawValue: typeName) ?? .consumable,
      title: try row.decode("title"), description: try row.decode("description"),
      price: try row.decode("price"), currency: try row.decode("currency"),
      sortOrder: try row.decode("sort_order"), active: try row.decode("active"),
      grants: try JSONCoding.decode(Grants.self, fromText: try row.decode("grants")),
      content: try JSONCoding.decode(JSONValue.self, fromText: try row.decode("content")))
    revision = try row.decode("revision")
    createdAt = try row.decode("created_at")
    updatedAt = try row.decode("updated_at")
  }

  var publicView: PublicView {
    PublicView(
      productId: draft.productId, type: draft.type, title: draft.title,
      description: draft.description, price: draft.price, currency: draft.currency,
      sortOrder: draft.sortOrder, grants: draft.grants)
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
