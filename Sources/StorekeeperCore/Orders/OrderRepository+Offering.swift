import Postgres

extension OrderRepository {
  /// The order with the placement and offering it named (`order_offerings`, Migrations/0071),
  /// for the reads that show an order: `GET /v1/orders/{trade_no}` and the admin's view. A
  /// LEFT JOIN, so an order that named none reads as `find` reads it.
  package func findShowing(_ tradeNo: String) async throws -> Order? {
    guard
      let row = try await database.query(
        """
        SELECT \(unescaped: Order.columnsOfO), s.placement_id, s.offering_id, s.experiment_id,
               s.variant
        FROM orders o LEFT JOIN order_offerings s ON s.trade_no = o.trade_no
        WHERE o.trade_no = \(tradeNo)
        """
      ).first
    else { return nil }
    var order = try Order(row: row)
    if let placement = try row.decodeIfPresent("placement_id", as: String.self),
      let offering = try row.decodeIfPresent("offering_id", as: String.self)
    {
      order.shown = OfferingShown(
        placementId: placement, offeringId: offering,
        experimentId: try row.decodeIfPresent("experiment_id"),
        variant: try row.decodeIfPresent("variant"))
    }
    return order
  }
}
