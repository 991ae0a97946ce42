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
  /// The app spent it (`wallet_operations`).
  case spend
  /// The app's backend granted it (`wallet_operations`): a reward, not a purchase.
  case reward
  /// A later credit paid back what a refund could not take (`ledger_debts`).
  case debtRepaid = "debt_repaid"

  /// The sign of the row against the product's grant.
  var sign: Int64 {
    self == .refund || self == .transferred || self == .spend || self == .debtRepaid ? -1 : 1
  }
}
