/// What the app receives after a purchase settles (or is restored): the product's content and
/// what the purchase granted. Derived from the order and product only, so every repeat of the
/// same report gets the same answer (`newly_granted` false in all but the first).
package struct Delivery: Encodable, Sendable, Equatable {
  package var productId: String
  package var transactionId: String?
  package var quantity: Int32
  package var content: JSONValue
  package var granted: Grants
  /// Whether this very request granted it. A repeat of a report or a receipt gets the same
  /// content again with `false`, so a client that grants from `delivery` never grants twice.
  package var newlyGranted: Bool

  enum CodingKeys: String, CodingKey {
    case productId = "product_id"
    case transactionId = "transaction_id"
    case quantity, content, granted
    case newlyGranted = "newly_granted"
  }

  /// `balanceCredited` false: a sandbox purchase under `SANDBOX_POLICY=record_only`, which
  /// credits no balance, so none is said to be granted (its entitlement still is, marked
  /// sandbox).
  init(
    product: Product, quantity: Int32, transactionId: String?, newlyGranted: Bool,
    balanceCredited: Bool
  ) {
    self.newlyGranted = newlyGranted
    productId = product.productId
    self.transactionId = transactionId
    self.quantity = quantity
    content = product.content
    var granted = product.grants
    if let balance = granted.balance {
      granted.balance = balanceCredited ? balance.mapValues { $0 * Int64(quantity) } : nil
    }
    if let days = granted.durationDays { granted.durationDays = days * Int(quantity) }
    self.granted = granted
  }
}
