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
}
