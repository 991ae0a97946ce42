import HTTP
import Testing

@testable import StorekeeperCore

/// Routes end to end inside the test process, against a real PostgreSQL: an admin writes the
/// catalog, an app reads it and orders from it. Each test runs in process and over a socket.
@Suite(.database) struct CatalogAndOrderRouteTests {
  static let product = """
    {"type": "consumable", "title": "Gold", "description": "", "price": "0.99",
     "currency": "USD", "sort_order": 1, "active": true, "grants": {"balance": {"gold": 100}},
     "content": {}}
    """

  @Test(arguments: RouteTransport.allCases)
  func aProductAnAdminPutsIsServedAndCanBeOrdered(_ transport: RouteTransport) async throws {
    try await RouteClient.with(transport) { client in
      let put = try await client.send(
        .put, "/admin/v1/products/gold.100", admin: true, json: Self.product)
      #expect(put.status == 201 || put.status == 200)

      // The admin's write reloads the catalog at once: an admin reads their own write.
      let list = try await client.send(.get, "/v1/products")
      #expect(list.status == 200)
      guard case .array(let products)? = try list.json()["products"] else {
        Issue.record("no products in \(list.body)")
        return
      }
      #expect(products.count == 1)
      let etag = try #require(list.headers["etag"])
      let again = try await client.send(.get, "/v1/products", headers: [("If-None-Match", etag)])
      #expect(again.status == 304)

      let created = try await client.send(
        .post, "/v1/orders", json: #"{"user_id": "alice", "product_id": "gold.100"}"#)
      #expect(created.status == 201)
      let order = try created.json()
      #expect(order["user_id"] == .string("alice"))
      #expect(order["trade_status"] == .string("WAIT_BUYER_PAY"))
      guard case .string(let tradeNo)? = order["trade_no"] else {
        Issue.record("no trade_no in \(created.body)")
        return
      }
      #expect(created.headers["location"] == "/v1/orders/\(tradeNo)")

      let read = try await client.send(.get, "/v1/orders/\(tradeNo)")
      #expect(read.status == 200)
      #expect(try read.json()["trade_no"] == .string(tradeNo))
    }
  }

  @Test(arguments: RouteTransport.allCases)
  func refusalsAreAnsweredAsProblems(_ transport: RouteTransport) async throws {
    try await RouteClient.with(transport) { client in
      let missing = try await client.send(
        .post, "/v1/orders", json: #"{"user_id": "alice", "product_id": "none.1"}"#)
      #expect(missing.status == 404)
      #expect(missing.headers["content-type"] == "application/problem+json")
      #expect(try missing.json()["code"] == .string("product_not_found"))

      let unauthorized = try await client.send(.get, "/admin/v1/products")
      #expect(unauthorized.status == 401)
    }
  }
}
