import Postgres

/// What part of a purchase a partial refund takes back, and of what.
enum RefundShare: Sendable {
  /// `units` of the `quantity` the order paid for, of what the order's credits gave (Google's
  /// quantity-based refunds, and the full refund of what they left: an order a transfer paid
  /// is for the units left, and was credited for those).
  case units(Int32, of: Int32)
  /// Apple's prorated refund: the cumulative share Apple refunded growing from `before` to
  /// `milliunits` (of 100000) of what the purchase credited when it was bought, whichever order
  /// holds it now (Apple's percentage counts from the whole purchase, and a transfer's order was
  /// credited only what was left of it). Both cumulative, so the plan rounds the whole share
  /// once and takes what that adds, not a rounding of each increment.
  case prorated(milliunits: Int32, before: Int32)

  /// The plan's rows: `storekeeper_refund_plan_share` or `storekeeper_refund_plan_prorated`.
  func plan(_ tradeNo: String) -> PostgresQuery {
    switch self {
    case .units(let units, let quantity):
      "storekeeper_refund_plan_share(\(tradeNo), \(units)::integer, \(quantity)::integer)"
    case .prorated(let milliunits, let before):
      """
      storekeeper_refund_plan_prorated(\(tradeNo), \(milliunits)::integer, \(before)::integer)
      """
    }
  }
}
