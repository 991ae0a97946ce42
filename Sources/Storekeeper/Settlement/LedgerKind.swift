import Postgres

/// Why a ledger row moves a balance.
enum LedgerKind: String, Sendable, PostgresEnum {
  case grant
  case refund
  case refundReversed = "refund_reversed"

  /// The sign of the row against the product's grant.
  var sign: Int64 { self == .refund ? -1 : 1 }
}
