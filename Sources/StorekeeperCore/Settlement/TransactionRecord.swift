import AppStore
import Foundation
import Postgres

/// `apple_transactions`: every Apple transaction Storekeeper has seen, once. The primary key on
/// `transaction_id` is the exactly-once guarantee: the first order to claim a transaction owns it.
enum TransactionRecord {
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
        environment, quantity, type, app_account_token, app_transaction_id, trade_no, user_id, source,
        purchase_date, expires_date, billed_expires_date, revocation_date, revocation_reason,
        price_milliunits, currency, storefront, offer_type, offer_discount_type, is_upgraded,
        family_shared)
      VALUES (\(transaction.transactionId), \(transaction.originalTransactionId),
        \(transaction.productId), \(transaction.bundleId), \(transaction.environment),
        \(transaction.quantity), \(transaction.type), \(validToken(transaction.appAccountToken))::uuid,
        \(validAppTransactionId(transaction.appTransactionId)), \(tradeNo), \(userId), \(source),
      """
    query.append(time(transaction.purchaseDate))
    query.append(", ")
    query.append(time(transaction.expiresDate))
    query.append(", ")
    // What the price paid for; `updateExpiry` never moves it (an extension is free time).
    query.append(time(transaction.expiresDate))
    query.append(", ")
    query.append(time(transaction.revocationDate))
    query.append(", \(transaction.revocationReason), ")
    query.append(facts(transaction))
    return query
  }

  /// The price, currency, storefront and offer as Apple signed them, each kept only in the
  /// shape Apple gives it (anything else is NULL, never a refused settlement): charts count
  /// money and group countries from these.
  private static func facts(_ transaction: VerifiedTransaction) -> PostgresQuery {
    func code(_ text: String?) -> String? {
      guard let text, text.utf8.count == 3,
        text.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) })
      else { return nil }
      return text
    }
    let discount = transaction.offerDiscountType.flatMap { text -> String? in
      text.utf8.count <= 32 && text.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || $0 == 95 })
        ? text : nil
    }
    let price = transaction.price.flatMap { $0 >= 0 ? $0 : nil }
    return """
      \(price)::bigint, \(code(transaction.currency)), \(code(transaction.storefront)),
      \(transaction.offerType)::integer, \(discount), \(transaction.isUpgraded ?? false),
      \(transaction.isFamilyShared))
      """
  }

  /// A statement that records the transaction as paying `order` and yields a row only if it
  /// did: new, already this order's, or known without an owner and carrying this order's
  /// `app_account_token` (a receipt posted without a user, for a purchase this order made). A
  /// transaction known without an owner and without this order's token is never claimed by a
  /// later post: only an admin transfer gives it an owner. A transaction another order owns
  /// yields nothing — the row lock the upsert takes makes two orders racing for one transaction
  /// take turns, and the second sees the first's.
  static func claim(_ transaction: VerifiedTransaction, for order: Order, source: TransactionSource)
    -> PostgresQuery
  {
    var query = insert(transaction, source: source, tradeNo: order.tradeNo, userId: order.userId)
    query.append(
      """
       ON CONFLICT (transaction_id) DO UPDATE
        SET trade_no = EXCLUDED.trade_no, user_id = EXCLUDED.user_id,
          app_transaction_id = COALESCE(apple_transactions.app_transaction_id,
            EXCLUDED.app_transaction_id),
          -- A receipt read here does not say; a later signed proof that does is believed.
          family_shared = apple_transactions.family_shared OR EXCLUDED.family_shared,
          -- Apple marks a period upgraded from once the upgrade is bought: it grants no more.
          is_upgraded = apple_transactions.is_upgraded OR EXCLUDED.is_upgraded
        WHERE apple_transactions.trade_no = EXCLUDED.trade_no
           OR (apple_transactions.trade_no IS NULL
               AND apple_transactions.app_account_token = \(order.appAccountToken)::uuid)
      RETURNING transaction_id
      """)
    return query
  }

  /// A known transaction as its row says: who owns it, the token it carries, and whether Apple
  /// has refunded or revoked it since (a notification records that; the proof may predate it).
  struct Known: Sendable {
    var tradeNo: String?
    var userId: String?
    var appAccountToken: String?
    var revoked: Bool
  }

  /// Locks a transaction's row if it is known.
  static func find(_ transactionId: String, on tx: PostgresTransaction) async throws -> Known? {
    guard
      let row = try await tx.query(
        """
        SELECT trade_no, user_id, app_account_token::text AS app_account_token,
          revocation_date IS NOT NULL AS revoked
        FROM apple_transactions WHERE transaction_id = \(transactionId) FOR UPDATE
        """
      ).first
    else { return nil }
    return Known(
      tradeNo: try row.decodeIfPresent("trade_no"), userId: try row.decodeIfPresent("user_id"),
      appAccountToken: try row.decodeIfPresent("app_account_token"),
      revoked: try row.decode("revoked"))
  }

  /// Records a transaction nobody owns yet (a receipt posted without a user, or one that carries
  /// another user's order token); does nothing if it is known. Returns whether this call wrote
  /// it: of two posts racing with the same new transaction, the database lets one insert and
  /// makes the other wait and insert nothing, so only one is told it came first.
  @discardableResult static func recordUnowned(
    _ transaction: VerifiedTransaction, source: TransactionSource, on tx: PostgresTransaction
  ) async throws -> Bool {
    var query = insert(transaction, source: source, tradeNo: nil, userId: nil)
    query.append(" ON CONFLICT (transaction_id) DO NOTHING")
    return try await tx.execute(query) == 1
  }

  /// Hands a transaction to another order (an admin transfer), inside the transaction that then
  /// settles that order with it.
  static func assign(_ transactionId: String, to order: Order, on tx: PostgresTransaction)
    async throws
  {
    try await tx.execute(
      """
      UPDATE apple_transactions SET trade_no = \(order.tradeNo), user_id = \(order.userId)
      WHERE transaction_id = \(transactionId)
      """)
  }

  /// A recorded transaction as the domain sees it again, for a transfer.
  static func load(_ transactionId: String, on tx: PostgresTransaction) async throws
    -> VerifiedTransaction?
  {
    guard
      let row = try await tx.query(
        """
        SELECT transaction_id, original_transaction_id, bundle_id, product_id, quantity,
          (extract(epoch FROM purchase_date) * 1000)::bigint AS purchase_ms,
          (extract(epoch FROM expires_date) * 1000)::bigint AS expires_ms,
          (extract(epoch FROM revocation_date) * 1000)::bigint AS revocation_ms,
          revocation_reason, app_account_token::text AS app_account_token, environment, type,
          app_transaction_id, family_shared
        FROM apple_transactions WHERE transaction_id = \(transactionId)
        """
      ).first
    else { return nil }
    return VerifiedTransaction(
      transactionId: try row.decode("transaction_id"),
      originalTransactionId: try row.decode("original_transaction_id"),
      bundleId: try row.decode("bundle_id"), productId: try row.decode("product_id"),
      quantity: try row.decode("quantity"), purchaseDate: try row.decode("purchase_ms"),
      expiresDate: try row.decodeIfPresent("expires_ms"),
      revocationDate: try row.decodeIfPresent("revocation_ms"),
      revocationReason: try row.decodeIfPresent("revocation_reason"),
      appAccountToken: try row.decodeIfPresent("app_account_token"),
      environment: try row.decode("environment"), type: try row.decodeIfPresent("type"),
      appTransactionId: try row.decodeIfPresent("app_transaction_id"),
      isFamilyShared: try row.decode("family_shared"))
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

  /// The user who owns a subscription: the owner of its latest transaction that has one, read
  /// `FOR SHARE`. An admin transfer holds that row `FOR UPDATE` from before it moves it until it
  /// commits, so a renewal waits for it and then credits the new owner; read without the lock, it
  /// saw the old owner and made them the subscriber of every later period. The transfer takes
  /// nothing a renewal holds before this read (at most the renewal's own row), so the two only
  /// queue; a caller holding an order locked reads through
  /// `subscriber(originalTransactionId:holding:)`.
  static func subscriber(originalTransactionId: String, on tx: PostgresTransaction) async throws
    -> String?
  {
    try await tx.query(
      """
      SELECT user_id FROM apple_transactions
      WHERE original_transaction_id = \(originalTransactionId) AND user_id IS NOT NULL
      ORDER BY purchase_date DESC LIMIT 1 FOR SHARE
      """
    ).first?.decodeIfPresent("user_id")
  }

  /// `subscriber` for a caller holding `order` locked: when the subscription's latest owned
  /// transaction is the one that order paid, its owner is read without the row's lock. A
  /// transfer of it locks the row and then the order, so waiting for the row here would
  /// deadlock with it; the order's lock orders the two already (a transfer that committed first
  /// closed the order, one that comes after waits for this transaction).
  static func subscriber(
    originalTransactionId: String, holding order: Order, on tx: PostgresTransaction
  ) async throws -> String? {
    guard
      let latest = try await tx.query(
        """
        SELECT transaction_id, user_id FROM apple_transactions
        WHERE original_transaction_id = \(originalTransactionId) AND user_id IS NOT NULL
        ORDER BY purchase_date DESC LIMIT 1
        """
      ).first
    else { return nil }
    if try latest.decode("transaction_id", as: String.self) == order.transactionId {
      return try latest.decodeIfPresent("user_id")
    }
    return try await subscriber(originalTransactionId: originalTransactionId, on: tx)
  }

  /// A known transaction a later proof says is a Family Sharing copy (the first, an app receipt
  /// read here, did not say): from now on it is no money.
  static func learnFamilyShared(_ transactionId: String, on tx: PostgresTransaction) async throws {
    try await tx.execute(
      """
      UPDATE apple_transactions SET family_shared = true
      WHERE transaction_id = \(transactionId) AND NOT family_shared
      """)
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

  /// The transaction's expiry as `transaction` says. `onlyLater`: kept if it is later already,
  /// for a notification that only ever moves a period's end on (a renewal's, an extension's),
  /// which Apple may deliver after a later word about the same period (a retry of one whose
  /// first delivery failed, arriving after a RENEWAL_EXTENDED).
  static func updateExpiry(
    _ transaction: VerifiedTransaction, onlyLater: Bool = false, on tx: PostgresTransaction
  ) async throws {
    var query: PostgresQuery = "UPDATE apple_transactions SET expires_date = "
    if onlyLater { query.append("greatest(expires_date, ") }
    query.append(time(transaction.expiresDate))
    if onlyLater { query.append(")") }
    query.append(" WHERE transaction_id = \(transaction.transactionId)")
    try await tx.execute(query)
  }

  /// Apple's appTransactionId is a decimal number; anything else is not kept.
  static func validAppTransactionId(_ id: String?) -> String? {
    guard let id, !id.isEmpty, id.utf8.count <= 64,
      id.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
    else { return nil }
    return id
  }

  /// The users whose purchases carry an app download's `appTransactionId` (one Apple Account in
  /// this app), in user id order.
  static func users(appTransactionId: String, on executor: any PostgresExecutor) async throws
    -> [String]
  {
    try await executor.query(
      """
      SELECT DISTINCT user_id FROM apple_transactions
      WHERE app_transaction_id = \(appTransactionId) AND user_id IS NOT NULL ORDER BY user_id
      """
    ).map { try $0.decode("user_id") }
  }

  /// Apple's appAccountToken is a UUID; anything else is kept out of the uuid column.
  static func validToken(_ token: String?) -> String? { AccountToken.normalized(token) }
}
