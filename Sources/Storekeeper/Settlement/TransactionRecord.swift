import AppStore
import Foundation
import Postgres

/// `apple_transactions`: every Apple transaction Storekeeper has seen, once. The primary key on
/// `transaction_id` is the exactly-once guarantee: the first order to claim a transaction owns it.
enum TransactionRecord {
  struct Existing: Sendable {
    var tradeNo: String?
    var userId: String?
  }

  /// Epoch milliseconds as an exact timestamptz expression.
  static func time(_ ms: Int64?) -> PostgresQuery {
    guard let ms else { return "NULL::timestamptz" }
    return "(timestamptz 'epoch' + \(ms)::bigint * interval '1 millisecond')"
  }

  private static func insert(
    _ transaction: VerifiedTransaction, source: TransactionSource, tradeNo: String?,
    userId: String?
  ) -> PostgresQuery {
    var query: PostgresQuery = """
      INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
        environment, quantity, type, app_account_token, trade_no, user_id, source, purchase_date,
        expires_date, revocation_date, revocation_reason)
      VALUES (\(transaction.transactionId), \(transaction.originalTransactionId),
        \(transaction.productId), \(transaction.bundleId), \(transaction.environment),
        \(transaction.quantity), \(transaction.type), \(validToken(transaction.appAccountToken))::uuid,
        \(tradeNo), \(userId), \(source),
      """
    query.append(time(transaction.purchaseDate))
    query.append(", ")
    query.append(time(transaction.expiresDate))
    query.append(", ")
    query.append(time(transaction.revocationDate))
    query.append(", \(transaction.revocationReason))")
    return query
  }

  /// A statement that records the transaction as paying `tradeNo` and yields a row only if
  /// it did: new, known without an owner (a receipt posted without a user), or already this
  /// order's. A transaction another order owns yields nothing — the row lock the upsert takes
  /// makes two orders racing for one transaction take turns, and the second sees the first's.
  static func claim(
    _ transaction: VerifiedTransaction, tradeNo: String, userId: String, source: TransactionSource
  ) -> PostgresQuery {
    var query = insert(transaction, source: source, tradeNo: tradeNo, userId: userId)
    query.append(
      """
       ON CONFLICT (transaction_id) DO UPDATE
        SET trade_no = EXCLUDED.trade_no, user_id = EXCLUDED.user_id
        WHERE apple_transactions.trade_no IS NULL OR apple_transactions.trade_no = EXCLUDED.trade_no
      RETURNING transaction_id
      """)
    return query
  }

  /// Inserts the transaction without an owner if it is new (returns nil) or returns who owns it
  /// already, locking its row either way until the surrounding transaction ends.
  static func insertOrLock(
    _ transaction: VerifiedTransaction, source: TransactionSource, on tx: PostgresTransaction
  ) async throws -> Existing? {
    var query = insert(transaction, source: source, tradeNo: nil, userId: nil)
    query.append(" ON CONFLICT (transaction_id) DO NOTHING RETURNING 1 AS inserted")
    if try await !tx.query(query).isEmpty { return nil }
    let rows = try await tx.query(
      "SELECT trade_no, user_id FROM apple_transactions WHERE transaction_id = \(transaction.transactionId) FOR UPDATE"
    )
    guard let row = rows.first else { return Existing(tradeNo: nil, userId: nil) }
    return Existing(
      tradeNo: try row.decodeIfPresent("trade_no"), userId: try row.decodeIfPresent("user_id"))
  }

  /// Locks a known transaction; `known` is false when Storekeeper has never seen it, and
  /// `tradeNo` is nil while no order owns it.
  static func lock(_ transactionId: String, on tx: PostgresTransaction) async throws -> (
    known: Bool, tradeNo: String?
  ) {
    let rows = try await tx.query(
      "SELECT trade_no FROM apple_transactions WHERE transaction_id = \(transactionId) FOR UPDATE")
    guard let row = rows.first else { return (false, nil) }
    return (true, try row.decodeIfPresent("trade_no"))
  }

  /// The user who owns a subscription, from any of its transactions.
  static func subscriber(originalTransactionId: String, on tx: PostgresTransaction) async throws
    -> String?
  {
    try await tx.query(
      """
      SELECT user_id FROM apple_transactions
      WHERE original_transaction_id = \(originalTransactionId) AND user_id IS NOT NULL
      ORDER BY purchase_date DESC LIMIT 1
      """
    ).first?.decodeIfPresent("user_id")
  }

  /// Records Apple's refund or revocation (at `atMs`), or, with nil, its reversal.
  static func setRevocation(
    _ transactionId: String, atMs: Int64?, reason: Int?, on tx: PostgresTransaction
  ) async throws {
    var query: PostgresQuery = "UPDATE apple_transactions SET revocation_date = "
    query.append(time(atMs))
    query.append(
      ", revocation_reason = \(reason) WHERE transaction_id = \(transactionId)")
    try await tx.execute(query)
  }

  static func updateExpiry(_ transaction: VerifiedTransaction, on tx: PostgresTransaction)
    async throws
  {
    var query: PostgresQuery = "UPDATE apple_transactions SET expires_date = "
    query.append(time(transaction.expiresDate))
    query.append(" WHERE transaction_id = \(transaction.transactionId)")
    try await tx.execute(query)
  }

  /// Apple's appAccountToken is a UUID; anything else is kept out of the uuid column.
  static func validToken(_ token: String?) -> String? {
    guard let token, token.count == 36,
      token.utf8.allSatisfy({
        $0 == 45 || ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70)
      })
    else {
      return nil
    }
    return token.lowercased()
  }
}
