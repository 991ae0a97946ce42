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
  /// The id Google Play knows it by (a subscription's id for a subscription); nil: the same
  /// as `productId`.
  package var googleProductId: String? = nil
  /// For a subscription, the base plan it sells; nil: any of the subscription's base plans.
  package var googleBasePlanId: String? = nil

  package init(
    productId: String, type: ProductType, title: String, description: String, price: String,
    currency: String, sortOrder: Int32, active: Bool, grants: Grants, content: JSONValue,
    googleProductId: String? = nil, googleBasePlanId: String? = nil
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
    self.googleProductId = googleProductId
    self.googleBasePlanId = googleBasePlanId
  }

  /// What Google Play calls it: its own Google id, else the App Store's.
  package var effectiveGoogleProductId: String { googleProductId ?? productId }

  /// The URL names the product, so the body has no `product_id`.
  package static let putFields: Set<String> = [
    "type", "title", "description", "price", "currency", "sort_order", "active",
    "grants", "content", "google_product_id", "google_base_plan_id",
  ]
  package static let patchFields: Set<String> = [
    "price", "currency", "sort_order", "title", "description", "active", "grants", "content",
    "google_product_id", "google_base_plan_id",
  ]
  package static let maxContentBytes = 64 * 1024

  package static func isValidProductId(_ id: String) -> Bool {
    StoreIdentifier.isValid(id, maxLength: 100)
  }

  /// Play Console's rule for a base plan id: lowercase letters, digits and `-`, starting with
  /// a letter or digit, at most 63 characters.
  package static func isValidBasePlanId(_ id: String) -> Bool {
    let bytes = Array(id.utf8)
    guard let first = bytes.first, bytes.count <= 63 else { return false }
    func allowed(_ byte: UInt8) -> Bool {
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
    return allowed(first) && bytes.allSatisfy { allowed($0) || $0 == UInt8(ascii: "-") }
  }
}
