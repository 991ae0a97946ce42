/// A validated product as an admin wants it stored: built from a PUT body, or from a PATCH body
/// laid over the current product. Every problem is reported with its field.
struct ProductDraft: Sendable, Equatable {
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

  /// The URL names the product, so the body has no `product_id`.
  static let putFields: Set<String> = [
    "type", "title", "description", "price", "currency", "sort_order", "active",
    "grants", "content",
  ]
  static let patchFields: Set<String> = [
    "price", "currency", "sort_order", "title", "description", "active", "grants", "content",
  ]
  static let maxContentBytes = 64 * 1024

  static func isValidProductId(_ id: String) -> Bool {
    StoreIdentifier.isValid(id, maxLength: 100)
  }
}
