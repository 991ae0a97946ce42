/// A validated product as an admin wants it stored: built from a PUT body, or from a PATCH body
/// laid over the current product. Every problem is reported with its field.
package struct ProductDraft: Sendable, Equatable {
  package var productId: String
  package var type: ProductType
  package var title: String
  package var description: String
  package var price: String
  package var currency: String
  package var sortOrder: Int32
  package var active: Bool
  package var grants: Grants
  package var content: JSONValue

  package init(
    productId: String, type: ProductType, title: String, description: String, price: String,
    currency: String, sortOrder: Int32, active: Bool, grants: Grants, content: JSONValue
  ) {
    self.productId = productId
    self.type = type
    self.title = title
    self.description = description
    self.price = price
    self.currency = currency
    self.sortOrder = sortOrder
    self.active = active
    self.grants = grants
    self.content = content
  }

  /// The URL names the product, so the body has no `product_id`.
  package static let putFields: Set<String> = [
    "type", "title", "description", "price", "currency", "sort_order", "active",
    "grants", "content",
  ]
  package static let patchFields: Set<String> = [
    "price", "currency", "sort_order", "title", "description", "active", "grants", "content",
  ]
  package static let maxContentBytes = 64 * 1024

  package static func isValidProductId(_ id: String) -> Bool {
    StoreIdentifier.isValid(id, maxLength: 100)
  }
}
