import Postgres

/// A catalog entry as stored: what an admin edits (`draft`) plus its bookkeeping. Encoded whole
/// for admins; `publicView` is what apps see. Fields of the draft read as the product's own.
@dynamicMemberLookup
package struct Product: Encodable, Sendable, Equatable {
  package var draft: ProductDraft
  var revision: Int64
  var createdAt: String
  var updatedAt: String

  package subscript<T>(dynamicMember keyPath: KeyPath<ProductDraft, T>) -> T {
    draft[keyPath: keyPath]
  }

  enum CodingKeys: String, CodingKey {
    case productId = "product_id"
    case type, title, description, price, currency
    case sortOrder = "sort_order"
    case active, grants, content, revision
    case createdAt = "created_at"
    case updatedAt = "updated_at"
    case googleProductId = "google_product_id"
    case googleBasePlanId = "google_base_plan_id"
  }

  package func encode(to encoder: any Encoder) throws {
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
    // The id Google Play knows it by, the App Store's unless set otherwise.
    try container.encode(draft.effectiveGoogleProductId, forKey: .googleProductId)
    try container.encodeIfPresent(draft.googleBasePlanId, forKey: .googleBasePlanId)
    try container.encode(revision, forKey: .revision)
    try container.encode(createdAt, forKey: .createdAt)
    try container.encode(updatedAt, forKey: .updatedAt)
  }

  /// The admin ETag: strong, changes with every write.
  package var etag: String { "\"p\(revision)\"" }

  static let columns = columns(of: "", as: "")
  /// The same read from `products p`, each column named `p_…`, to sit beside another table's.
  static let columnsAsProduct = columns(of: "p.", as: "p_")

  private static func columns(of table: String, as prefix: String) -> String {
    let plain = [
      "product_id", "type", "title", "description", "currency", "sort_order", "active", "revision",
      "google_product_id", "google_base_plan_id",
    ]
    let cast = ["price", "grants", "content"]
    return
      (plain.map { "\(table)\($0) AS \(prefix)\($0)" }
      + cast.map { "\(table)\($0)::text AS \(prefix)\($0)" }
      + ["created_at", "updated_at"].map { SQLTime.rfc3339("\(table)\($0)", as: "\(prefix)\($0)") })
      .joined(separator: ", ")
  }

  init(draft: ProductDraft, revision: Int64, createdAt: String, updatedAt: String) {
    self.draft = draft
    self.revision = revision
    self.createdAt = createdAt
    self.updatedAt = updatedAt
  }

  init(row: PostgresRow) throws { try self.init(row: row, prefix: "") }

  init(row: PostgresRow, prefix: String) throws {
    func column(_ name: String) -> String { prefix + name }
    draft = ProductDraft(
      productId: try row.decode(column("product_id")), type: try row.decode(column("type")),
      title: try row.decode(column("title")), description: try row.decode(column("description")),
      price: try row.decode(column("price")), currency: try row.decode(column("currency")),
      sortOrder: try row.decode(column("sort_order")), active: try row.decode(column("active")),
      grants: try Grants(databaseText: try row.decode(column("grants"))),
      content: try JSONValue(databaseText: try row.decode(column("content"))),
      googleProductId: try row.decodeIfPresent(column("google_product_id")),
      googleBasePlanId: try row.decodeIfPresent(column("google_base_plan_id")))
    revision = try row.decode(column("revision"))
    createdAt = try row.decode(column("created_at"))
    updatedAt = try row.decode(column("updated_at"))
  }

  package var publicView: PublicView {
    PublicView(
      productId: draft.productId, type: draft.type, title: draft.title,
      description: draft.description, price: draft.price, currency: draft.currency,
      sortOrder: draft.sortOrder, grants: draft.grants,
      googleProductId: draft.effectiveGoogleProductId, googleBasePlanId: draft.googleBasePlanId)
  }

  package struct PublicView: Encodable, Sendable {
    var productId: String
    var type: ProductType
    var title: String
    var description: String
    var price: String
    var currency: String
    var sortOrder: Int32
    var grants: Grants
    /// What the Android app passes to Google Play Billing.
    var googleProductId: String
    var googleBasePlanId: String?

    enum CodingKeys: String, CodingKey {
      case productId = "product_id"
      case type, title, description, price, currency
      case sortOrder = "sort_order"
      case grants
      case googleProductId = "google_product_id"
      case googleBasePlanId = "google_base_plan_id"
    }
  }
}
