import GooglePlay
import Postgres

/// `google_purchases`: every Google Play purchase Storekeeper has verified, once. The primary
/// key on the purchase token is the exactly-once guarantee: the first order to claim a token
/// owns it, whoever asks after.
enum GooglePurchaseRecord {
  /// A statement that records `purchase` as paying `order` and yields a row only if it does:
  /// new, or already this order's. A token another order owns yields nothing; the row lock the
  /// upsert takes makes two orders racing for one token take turns, and the second sees the
  /// first's.
  static func claim(_ purchase: GooglePurchase, productId: String, for order: Order)
    -> PostgresQuery
  {
    var query: PostgresQuery = """
      INSERT INTO google_purchases (purchase_token, package_name, kind, product_id,
        google_product_id, order_id, quantity, obfuscated_account_id, environment,
        linked_purchase_token, state, trade_no, user_id, price_micros, currency, purchase_time,
        expiry_time, first_expiry_time)
      VALUES (\(purchase.token), \(purchase.packageName), \(purchase.kind), \(productId),
        \(purchase.googleProductId), \(purchase.orderId), \(purchase.quantity),
        \(purchase.obfuscatedAccountId), \(purchase.environment), \(purchase.linkedPurchaseToken),
        \(purchase.state), \(order.tradeNo), \(order.userId),
        \(purchase.currency == nil ? nil : purchase.priceMicros),
        \(purchase.priceMicros == nil ? nil : purchase.currency),
      """
    query.append(TransactionRecord.time(purchase.purchaseTimeMs))
    query.append(", ")
    query.append(TransactionRecord.time(purchase.expiryTimeMs))
    query.append(", ")
    query.append(TransactionRecord.time(purchase.expiryTimeMs))
    query.append(
      """
      ) ON CONFLICT (purchase_token) DO UPDATE
        SET expiry_time = EXCLUDED.expiry_time, state = EXCLUDED.state,
          price_micros = coalesce(EXCLUDED.price_micros, google_purchases.price_micros),
          currency = coalesce(EXCLUDED.currency, google_purchases.currency), updated_at = now()
        WHERE google_purchases.trade_no = EXCLUDED.trade_no
      RETURNING purchase_token
      """)
    return query
  }

  /// The assignments (each followed by a comma) that keep the plan's recurring price as the
  /// latest read of `subscriptionsv2` says it: a renewal's order is priced by it until the
  /// Orders API answers, and Google bills a changed price from the next renewal. Nothing is
  /// assigned when the answer names no price and currency, so the last one known stays.
  static func recurringPrice(_ price: GooglePlay.Money?) -> PostgresQuery {
    guard let micros = price?.micros, let currency = price?.currencyCode else { return "" }
    return "price_micros = \(micros), currency = \(currency),"
  }

  /// A known purchase as its row says: who owns it, and whether it was voided since.
  struct Known: Sendable {
    var tradeNo: String?
    var userId: String?
    var revoked: Bool
  }

  /// Locks the purchase's row if it is known.
  static func find(_ token: String, on tx: PostgresTransaction) async throws -> Known? {
    guard
      let row = try await tx.query(
        """
        SELECT trade_no, user_id, revoked_at IS NOT NULL AS revoked
        FROM google_purchases WHERE purchase_token = \(token) FOR UPDATE
        """
      ).first
    else { return nil }
    return Known(
      tradeNo: try row.decodeIfPresent("trade_no"), userId: try row.decodeIfPresent("user_id"),
      revoked: try row.decode("revoked"))
  }
}
