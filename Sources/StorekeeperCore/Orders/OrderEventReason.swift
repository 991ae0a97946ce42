import Postgres

/// What happened to an order, as `order_events.reason` records it. Each reason is one row of
/// `OrderStateMachine`'s table, which says from where it may happen and where it leads.
package enum OrderEventReason: String, Codable, Sendable, CaseIterable, PostgresEnum {
  case created
  case createdForReceipt = "created_for_receipt"
  case createdForRenewal = "created_for_renewal"
  case createdForTransfer = "created_for_transfer"
  case paid
  case reopenedByPayment = "reopened_by_payment"
  case cancelled
  case failed
  case expired
  case refunded
  case revoked
  case refundReversed = "refund_reversed"
  case transferred
  case verificationGaveUp = "verification_gave_up"
}
