import HTTP

/// `/v1/orders`: create an order before the purchase, read it after.
struct OrderRoutes: Sendable {
  let service: OrderService
  let orders: OrderRepository

  func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/orders", placement: .eventLoop) { request, _ in
      try await service.create(request)
    }
    router.add(.get, "/v1/orders/{trade_no}", placement: .eventLoop) { _, context in
      let tradeNo = context.parameters["trade_no"] ?? ""
      guard TradeNumber.isWellFormed(tradeNo), let order = try await orders.find(tradeNo) else {
        throw HTTPError(404, code: "order_not_found", detail: "no order \(tradeNo)")
      }
      return order.response()
    }
  }
}
