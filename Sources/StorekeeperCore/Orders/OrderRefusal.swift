/// Why an order cannot be created; the edge maps each case to its problem answer.
package enum OrderRefusal: Error, Equatable, Sendable {
  case productNotFound(String)
  case productInactive(String)
  /// Only consumables can be bought more than once per order.
  case quantityNotAllowed
  /// The user already holds the most unpaid orders allowed; paying, cancelling or letting one
  /// expire makes room.
  case tooManyOpenOrders(limit: Int)
  /// The user is below the limit but every slot this request tried was taken by another of
  /// their orders first (`OrderRepository.maxLostRaces` times): retryable, and never the limit.
  case contended
}
