import GooglePlay
import Postgres

/// A voided purchase whose token Storekeeper never credited (bought and never reported, or
/// reported to another deployment): nothing to take back, and nothing is, but an operator
/// should hear of it once. `google_unmatched_voids` keeps each entry once, since passes overlap
/// by an hour and instances share the sweep; `/metrics` counts the table.
extension GoogleSweeps {
  /// Records the entry; true the first time it is seen, when it is logged.
  func recordUnmatched(_ entry: VoidedPurchase, token: String) async throws -> Bool {
    let orderId = entry.orderId.flatMap { $0.isEmpty ? nil : $0 } ?? token
    let reason = entry.voidedReason.map { Int64($0) }
    let first = try await !database.query(
      """
      INSERT INTO google_unmatched_voids (order_id, voided_time_ms, purchase_token, voided_reason)
      VALUES (\(orderId), \(entry.voidedTimeMillis ?? 0), \(token), \(reason))
      ON CONFLICT DO NOTHING RETURNING 1
      """
    ).isEmpty
    if first {
      // The order id, never the token: a purchase token is what a report presents.
      logger.notice(
        "Google voided a purchase Storekeeper never credited; nothing taken back",
        ["order_id": .string(orderId), "voided_reason": .int(Int(reason ?? -1))])
    }
    return first
  }

  /// Entries recorded so far, for `/metrics`.
  package func unmatchedVoids() async throws -> Int64 {
    try await database.query("SELECT count(*) AS n FROM google_unmatched_voids").first?.decode(
      "n") ?? 0
  }
}
