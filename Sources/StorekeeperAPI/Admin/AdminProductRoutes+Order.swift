import HTTP
import StorekeeperCore

extension AdminProductRoutes {
  /// PUT /admin/v1/product-order's body: `products`, every product once, in the order apps are
  /// to show them, each `{"product_id", "revision"}` as the admin read it.
  static func productOrder(_ fields: RequestFields) throws -> [ProductPosition] {
    var fields = fields
    fields.rejectUnknown(allowed: ["products"])
    let limit = CatalogRepository.maxReorderItems
    var order: [ProductPosition] = []
    var seen: Set<String> = []
    switch fields.values["products"] {
    case nil: fields.fail("products", "is required")
    case .array(let values)? where (1...limit).contains(values.count):
      for (index, value) in values.enumerated() {
        let field = "products[\(index)]"
        guard case .object(let object) = value else {
          fields.fail(field, "must be an object with product_id and revision")
          continue
        }
        var item = RequestFields(values: object)
        item.rejectUnknown(allowed: ["product_id", "revision"])
        let productId = item.string("product_id", required: true, maxLength: 100)
        let revision = item.integer("revision", required: true, range: 1...Int64.max)
        for error in item.errors { fields.fail("\(field).\(error.field)", error.message) }
        guard let productId, let revision else { continue }
        if !ProductDraft.isValidProductId(productId) {
          fields.fail(
            "\(field).product_id", "must be 1-100 of letters, digits, '.', '_', '-'")
        } else if !seen.insert(productId).inserted {
          fields.fail("\(field).product_id", "lists \(productId) twice")
        } else {
          order.append(ProductPosition(productId: productId, revision: revision))
        }
      }
    default:
      fields.fail("products", "must be an array of 1 to \(limit) products")
    }
    try fields.validate()
    return order
  }
}
