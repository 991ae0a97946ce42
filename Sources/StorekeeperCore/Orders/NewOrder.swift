/// An order as a client asks for it, before it exists.
package struct NewOrder: Sendable {
  package var userId: String
  package var productId: String
  package var quantity: Int32
  package var store: OrderStore
  /// The storefront the app is in (ISO 3166-1 alpha-3): the order is priced as the catalog
  /// prices the product there (`product_prices`), else at its default price.
  package var storefront: String?
  /// What the order names as shown, so that its answer (and the answer an `Idempotency-Key`
  /// replays) says so; it is kept in `order_offerings` after the order commits.
  package var shown: OfferingShown?

  package init(
    userId: String, productId: String, quantity: Int32, store: OrderStore = .appStore,
    storefront: String? = nil, shown: OfferingShown? = nil
  ) {
    self.userId = userId
    self.productId = productId
    self.quantity = quantity
    self.store = store
    self.storefront = storefront
    self.shown = shown
  }

  /// The order a creation's outcome made, or the refusal it stands for.
  func created(_ outcome: OrderRepository.CreateOutcome, maxOpen: Int) throws(OrderRefusal)
    -> Order
  {
    switch outcome {
    case .created(var order):
      order.shown = shown
      return order
    case .productNotFound: throw .productNotFound(productId)
    case .productInactive: throw .productInactive(productId)
    case .quantityNotAllowed: throw .quantityNotAllowed
    case .tooManyOpenOrders: throw .tooManyOpenOrders(limit: maxOpen)
    case .contended: throw .contended
    }
  }
}
