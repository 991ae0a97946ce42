import Postgres

/// How an Apple transaction reached Storekeeper (`apple_transactions.source`).
package enum TransactionSource: String, Sendable, PostgresEnum {
  case signedTransaction = "signed_transaction"
  case receipt
  case notification
}
