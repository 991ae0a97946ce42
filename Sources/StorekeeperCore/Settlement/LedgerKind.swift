import Postgres

/// Why a ledger row moves a balance.
enum LedgerKind: String, Sendable, PostgresEnum {
  case grant
  case refund
  case refundReversed = "refund_reversed"
  /// Taken from the user an admin moved the purchase away from.
  case transferred
  /// An admin's manual adjustment (`ledger_adjustments`), either sign.
  case adjustment

  /// The sign of the row against the product's grant.
  var sign: Int64 { self == .refund || self == .transferred ? -1 : 1 }
}
