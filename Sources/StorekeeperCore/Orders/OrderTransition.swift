/// One legal move of an order, as `OrderStateMachine` allows it: where it starts, where it
/// ends, the reason recorded and the close reason the order carries afterwards.
struct OrderTransition: Equatable, Sendable {
  var from: TradeStatus
  var to: TradeStatus
  var reason: OrderEventReason
  /// Set exactly when `to` is `TRADE_CLOSED`.
  var closeReason: CloseReason?
}
