import StorekeeperCore

/// The JSON an app gets for an offering: its display metadata and its active products in
/// order, each as `GET /v1/products/{id}` shows it in the storefront, with its badge.
struct OfferingView: Encodable {
  struct Item: Encodable {
    var product: Product.PublicView
    var badge: String

    enum CodingKeys: String, CodingKey { case badge }

    func encode(to encoder: any Encoder) throws {
      try product.encode(to: encoder)
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(badge, forKey: .badge)
    }
  }

  var offeringId: String
  var title: String
  var badge: String
  var metadata: JSONValue
  var products: [Item]

  enum CodingKeys: String, CodingKey {
    case offeringId = "offering_id"
    case title, badge, metadata, products
  }
}
