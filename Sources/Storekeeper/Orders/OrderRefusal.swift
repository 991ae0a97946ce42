/// Why an order cannot be created; the edge maps each case to its problem answer.
enum OrderRefusal: Error, Equatable, Sendable {
  case productNotFound(String)
  case productInactive(String)
  /// Only consumables can be bought more than once per order.
  case quantityNotAllowed
  /// The user already holds the most unpaid orders allowed; paying, cancelling or letting one
  /// expire makes room.
  case tooManyOpenOrders(limit: Int)
}
