/// An order as a client asks for it, before it exists.
struct NewOrder: Sendable {
  var userId: String
  var productId: String
  var quantity: Int32

  /// The order a creation's outcome made, or the refusal it stands for.
  func created(_ outcome: OrderRepository.CreateOutcome, maxOpen: Int) throws(OrderRefusal)
    -> Order
  {
    switch outcome {
    case .created(let order): order
    case .productNotFound: throw .productNotFound(productId)
    case .productInactive: throw .productInactive(productId)
    case .quantityNotAllowed: throw .quantityNotAllowed
    case .tooManyOpenOrders: throw .tooManyOpenOrders(limit: maxOpen)
    case .contended: throw .contended
    }
  }
}
