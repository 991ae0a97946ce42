import GooglePlay
import Postgres

/// A voided purchase whose token Storekeeper has not credited (bought and never reported, or
/// reported to another deployment): nothing to take back, and nothing is, but an operator
/// should hear of it once. `google_unmatched_voids` keeps each entry once, since passes overlap
/// by an hour and instances share the sweep; `/metrics` counts the table. A report that comes
/// after the refund can still credit the token (Google answers an expired subscription as once
/// paid), when Google's list may no longer reach back to the void: each pass applies the kept
/// entries of tokens credited since.
extension GoogleSweeps {
  /// Records the entry; true the first time it is seen, when it is logged.
  func recordUnmatched(_ entry: VoidedPurchase, token: String) async throws -> Bool {
    let orderId = entry.orderId.flatMap { $0.isEmpty ? nil : $0 } ?? token
    let reason = entry.voidedReason.map { Int64($0) }
    let first = try await !database.query(
      """
      INSERT INTO google_unmatched_voids (order_id, voided_time_ms, purchase_token, voided_reason,
        voided_quantity)
      VALUES (\(orderId), \(entry.voidedTimeMillis ?? 0), \(token), \(reason),
        \(entry.voidedQuantity.map { Int64($0) }))
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

  /// Applies the kept entries whose token has been credited since, oldest first, each once
  /// (`google_voids`, as any entry); returns how many took something back.
  func applyMatchedLater() async throws -> Int {
    let rows = try await database.query(
      """
      SELECT u.order_id, u.voided_time_ms, u.purchase_token, u.voided_reason, u.voided_quantity
      FROM google_unmatched_voids u
      JOIN google_purchases gp ON gp.purchase_token = u.purchase_token AND gp.trade_no IS NOT NULL
      WHERE u.matched_at IS NULL
      ORDER BY u.voided_time_ms LIMIT 100
      """)
    var reversed = 0
    for row in rows {
      let token: String = try row.decode("purchase_token")
      let orderId: String = try row.decode("order_id")
      let voidedMs: Int64 = try row.decode("voided_time_ms")
      guard let purchase = try await notifications.known(token) else { continue }
      let entry = VoidedPurchase(
        purchaseToken: token, orderId: orderId, voidedTimeMillis: voidedMs,
        voidedReason: try row.decodeIfPresent("voided_reason"),
        voidedQuantity: try row.decodeIfPresent("voided_quantity"))
      let result = try await notifications.applyVoid(entry, token: token, purchase)
      try await database.execute(
        """
        UPDATE google_unmatched_voids SET matched_at = now()
        WHERE order_id = \(orderId) AND voided_time_ms = \(voidedMs)
        """)
      logger.notice(
        "Google voided a purchase before it was credited; taken back now",
        ["order_id": .string(orderId), "result": .string(result)])
      if result == "refunded" || result == "partial_refund" { reversed += 1 }
    }
    return reversed
  }

  /// Entries recorded so far, for `/metrics`.
  package func unmatchedVoids() async throws -> Int64 {
    try await database.query("SELECT count(*) AS n FROM google_unmatched_voids").first?.decode(
      "n") ?? 0
  }
}
