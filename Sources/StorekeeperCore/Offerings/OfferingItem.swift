/// One product of an offering, in its place, with the badge the paywall shows on it.
package struct OfferingItem: Codable, Sendable, Equatable {
  package var productId: String
  /// Such as "best value"; empty for none.
  package var badge: String

  package init(productId: String, badge: String = "") {
    self.productId = productId
    self.badge = badge
  }

  enum CodingKeys: String, CodingKey {
    case productId = "product_id"
    case badge
  }
}
