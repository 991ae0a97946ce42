import Postgres

/// One transaction behind a chart's point, and what it was there for (`event`: `purchase`,
/// `refund`, `purchase_and_refund`, `partial_refund`, `purchase_and_partial_refund`,
/// `refunded`, `partly_refunded`, `first_purchase`, `payment`,
/// `refunded_payment`, `active`, `trial`, `trial_converted`, `churned`, `reactivation`,
/// `billing_retry`, `grace_period`, or how a consumption request was answered).
package struct ChartPointTransaction: Encodable, Sendable {
  var transactionId: String
  var originalTransactionId: String
  var store: String
  var userId: String?
  var productId: String
  var environment: String
  var country: String
  var currency: String?
  var price: String?
  var isTrial: Bool
  var tradeNo: String?
  /// Nil only for a consumption request about a transaction Storekeeper has not seen.
  var purchaseDate: String?
  var expiresDate: String?
  var refundedAt: String?
  var segment: String?
  var event: String?
  /// The consumption request's notification (not encoded): one transaction may be asked
  /// about twice.
  var notification: String?

  /// Where the next page starts: the transaction, and for a consumption request its
  /// notification too (`ChartSQL.consumptionCursor`).
  var pageKey: String { notification.map { "\(transactionId)/\($0)" } ?? transactionId }

  enum CodingKeys: String, CodingKey {
    case transactionId = "transaction_id"
    case originalTransactionId = "original_transaction_id"
    case store
    case userId = "user_id"
    case productId = "product_id"
    case environment, country, currency, price
    case isTrial = "is_trial"
    case tradeNo = "trade_no"
    case purchaseDate = "purchase_date"
    case expiresDate = "expires_date"
    case refundedAt = "refunded_at"
    case segment, event
  }

  init(row: PostgresRow) throws {
    transactionId = try row.decode("transaction_id")
    originalTransactionId = try row.decode("original_transaction_id")
    store = try row.decode("store")
    userId = try row.decodeIfPresent("user_id")
    productId = try row.decode("product_id")
    environment = try row.decode("environment")
    country = try row.decode("country")
    currency = try row.decodeIfPresent("currency")
    price = try row.decodeIfPresent("price")
    isTrial = try row.decode("is_trial")
    tradeNo = try row.decodeIfPresent("trade_no")
    purchaseDate = try row.decodeIfPresent("purchase_date")
    expiresDate = try row.decodeIfPresent("expires_date")
    refundedAt = try row.decodeIfPresent("refunded_at")
    segment = try row.decodeIfPresent("segment")
    event = try row.decodeIfPresent("event")
    notification = row.has("notification") ? try row.decodeIfPresent("notification") : nil
  }
}
