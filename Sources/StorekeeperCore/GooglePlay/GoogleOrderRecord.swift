import Postgres

/// `google_orders`: each order Google charged for a purchase, written beside the order
/// transition it pays (so it reads that order as `changed`). Its price is due from the Orders
/// API (`GoogleOrderPrices`) unless Google named no order id.
enum GoogleOrderRecord {
  /// A purchase's own order: its first (or, for a subscription reported late, its latest).
  /// A transfer moves the row to the new Storekeeper order.
  static func first(_ purchase: GooglePurchase) -> PostgresQuery {
    let priced = purchase.priceMicros != nil && purchase.currency != nil
    var query: PostgresQuery = """
      INSERT INTO google_orders (order_id, purchase_token, trade_no, purchased_at, expiry_time,
        price_micros, currency, price_source, price_due_at)
      SELECT \(purchase.orderId), \(purchase.token), changed.trade_no,
      """
    query.append(TransactionRecord.time(purchase.purchaseTimeMs))
    query.append(", ")
    query.append(TransactionRecord.time(purchase.expiryTimeMs))
    query.append(
      """
      , \(priced ? purchase.priceMicros : nil), \(priced ? purchase.currency : nil),
        \(priced ? "plan" : nil)::text,
        CASE WHEN \(purchase.orderId)::text <> \(purchase.token)::text THEN now() END
      FROM changed
      ON CONFLICT (order_id) DO UPDATE SET trade_no = EXCLUDED.trade_no
      """)
    return query
  }

  /// A renewal's order, charged at `chargedAtMs` (until the Orders API says when), paid up to
  /// `expiryMs`, priced by the plan until the Orders API says what it cost.
  static func renewal(token: String, orderId: String, chargedAtMs: Int64, expiryMs: Int64?)
    -> PostgresQuery
  {
    var query: PostgresQuery = """
      INSERT INTO google_orders (order_id, purchase_token, trade_no, renewal, purchased_at,
        expiry_time, price_micros, currency, price_source, price_due_at)
      SELECT \(orderId), gp.purchase_token, changed.trade_no, true,
      """
    query.append(TransactionRecord.time(chargedAtMs))
    query.append(", ")
    query.append(TransactionRecord.time(expiryMs))
    query.append(
      """
      , gp.price_micros, gp.currency,
        CASE WHEN gp.price_micros IS NOT NULL THEN 'plan' END, now()
      FROM changed, google_purchases gp WHERE gp.purchase_token = \(token)
      ON CONFLICT (order_id) DO NOTHING
      """)
    return query
  }
}
