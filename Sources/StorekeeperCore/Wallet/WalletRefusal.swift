/// Why a spend or grant was not made.
package enum WalletRefusal: Error, Equatable {
  /// The balance of the asset is below the amount; nothing was taken.
  case insufficientBalance(balance: Int64)
  /// The Idempotency-Key was used before for this user with a different operation.
  case keyReused
}
