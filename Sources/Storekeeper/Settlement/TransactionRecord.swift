import AppStore
import Postgres

/// Writes an Apple transaction into `apple_transactions` once. The primary key on
/// `transaction_id` is the exactly-once guarantee: whoever inserts it first owns it.
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

  /// Inserts the transaction if it is new (returns nil) or returns who owns it already,
  /// locking its row either way until the surrounding transaction ends.
  static func insertOrLock(
    _ transaction: VerifiedTransaction, source: String, on tx: PostgresTransaction
  ) async throws -> Existing? {
    var query: PostgresQuery = """
      INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
        environment, quantity, type, app_account_token, purchase_date, expires_date,
        revocation_date, revocation_reason, source)
      VALUES (\(transaction.transactionId), \(transaction.originalTransactionId),
        \(transaction.productId), \(transaction.bundleId), \(transaction.environment),
        \(transaction.quantity), \(transaction.type), \(validToken(transaction.appAccountToken))::uuid,
      """
    query.append(time(transaction.purchaseDate))
    query.append(", ")
    query.append(time(transaction.expiresDate))
    query.append(", ")
    query.append(time(transaction.revocationDate))
    query.append(
      ", \(transaction.revocationReason), \(source)) ON CONFLICT (transaction_id) DO NOTHING RETURNING 1 AS inserted"
    )
    if try await !tx.query(query).isEmpty { return nil }
    let rows = try await tx.query(
      "SELECT trade_no, user_id FROM apple_transactions WHERE transaction_id = \(transaction.transactionId) FOR UPDATE"
    )
    guard let row = rows.first else { return Existing(tradeNo: nil, userId: nil) }
    return Existing(
      tradeNo: try row.decodeIfPresent("trade_no"), userId: try row.decodeIfPresent("user_id"))
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
