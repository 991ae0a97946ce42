import Postgres

/// `order_offerings` (Migrations/0071): what an order was made from. Written after the order
/// commits, outside the group commit that writes orders, so attribution costs nothing to
/// orders that name no offering; an order whose row could not be written is attributed by the
/// window rule, as an order that named none.
package struct OrderOfferingRepository: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  package func record(_ shown: OfferingShown, tradeNo: String) async throws {
    try await database.execute(
      """
      INSERT INTO order_offerings (trade_no, placement_id, offering_id, experiment_id, variant)
      VALUES (\(tradeNo), \(shown.placementId), \(shown.offeringId), \(shown.experimentId),
              \(shown.variant))
      ON CONFLICT (trade_no) DO NOTHING
      """)
  }

  package func find(_ tradeNo: String) async throws -> OfferingShown? {
    try await database.queryFirst(
      """
      SELECT placement_id, offering_id, experiment_id, variant FROM order_offerings
      WHERE trade_no = \(tradeNo)
      """
    ).map {
      OfferingShown(
        placementId: try $0.decode("placement_id"), offeringId: try $0.decode("offering_id"),
        experimentId: try $0.decodeIfPresent("experiment_id"),
        variant: try $0.decodeIfPresent("variant"))
    }
  }
}
