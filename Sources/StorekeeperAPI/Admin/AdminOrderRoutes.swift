import Foundation
import HTTP
import Postgres
import StorekeeperCore

/// `/admin/v1/orders…`: filtered keyset pages and the full story of one order.
package struct AdminOrderRoutes: Sendable {
  let auth: AdminAuthenticator
  let orders: OrderRepository
  let database: PostgresPool
  /// The listing's repository: on the read replica when there is one.
  let listings: OrderRepository

  package init(
    auth: AdminAuthenticator, orders: OrderRepository, database: PostgresPool,
    listings: OrderRepository
  ) {
    self.auth = auth
    self.orders = orders
    self.database = database
    self.listings = listings
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/orders") { request, context in
      _ = try auth.authenticate(request, context)
      let filter = try Self.filter(request.query)
      let page = try await listings.list(filter)
      return try JSONCoding.response(ListPage("orders", page.orders, next: page.next))
    }
    router.add(.get, "/admin/v1/orders/{trade_no}") { request, context in
      _ = try auth.authenticate(request, context)
      let tradeNo = context.parameters["trade_no"] ?? ""
      guard TradeNumber.isWellFormed(tradeNo), let order = try await orders.findShowing(tradeNo)
      else {
        throw HTTPError(404, code: "order_not_found", detail: "no order \(tradeNo)")
      }
      let detail = try await OrderDetail.load(order, database: database, orders: orders)
      return try JSONCoding.response(detail)
    }
  }

  static func filter(_ query: [String: String]) throws -> OrderRepository.Filter {
    var problems: [FieldError] = []
    let known: Set<String> = [
      "trade_status", "user_id", "product_id", "created_from", "created_to", "limit", "cursor",
    ]
    var filter = OrderRepository.Filter(limit: 50)
    if let text = query["trade_status"] {
      if let status = TradeStatus(rawValue: text) {
        filter.tradeStatus = status
      } else {
        problems.append(
          FieldError(
            field: "trade_status", message: "must be WAIT_BUYER_PAY, TRADE_SUCCESS or TRADE_CLOSED")
        )
      }
    }
    if let user = query["user_id"] {
      if UserId.isValid(user) {
        filter.userId = user
      } else {
        problems.append(FieldError(field: "user_id", message: "must be 1-128 printable characters"))
      }
    }
    if let product = query["product_id"] {
      if ProductDraft.isValidProductId(product) {
        filter.productId = product
      } else {
        problems.append(FieldError(field: "product_id", message: "is not a valid product id"))
      }
    }
    for (name, keyPath) in [
      ("created_from", \OrderRepository.Filter.createdFrom), ("created_to", \.createdTo),
    ] {
      guard let text = query[name] else { continue }
      if let date = Timestamp.parse(text) {
        filter[keyPath: keyPath] = Timestamp.clampedToStoredRange(date)
      } else {
        problems.append(
          FieldError(
            field: name, message: "must be an RFC 3339 timestamp such as 2026-11-29T00:00:00Z"))
      }
    }
    let page = PageRequest(
      query, known: known, problems: &problems,
      cursorRule: "must be a trade number (1-64 of letters, digits and '_')",
      isKey: TradeNumber.isWellFormed)
    filter.limit = page.limit
    filter.after = page.after
    try PageRequest.check(problems)
    return filter
  }
}
