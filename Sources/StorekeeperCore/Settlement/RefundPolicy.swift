import Postgres

/// `REFUND_POLICY`: what a refund does when part of what its purchase credited is already
/// spent.
package enum RefundPolicy: String, Sendable, PostgresEnum {
  /// Take back what is left of the purchase's lot and record the rest as debt, repaid by the
  /// user's next credits: the balance does not go below zero.
  case debt
  /// Take back everything the purchase credited: the balance may go below zero, and the next
  /// credits bring it back.
  case negative
}
