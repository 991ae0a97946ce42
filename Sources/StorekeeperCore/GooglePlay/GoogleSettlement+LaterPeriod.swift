import Postgres

extension GoogleSettlement {
  /// Whether `purchase` is a later period of the subscription that paid `order`: the same
  /// token, a later order id. Play Billing gives an app the purchase with its latest order id
  /// (`queryPurchasesAsync` after a renewal), and an app that reports it with the trade number
  /// it kept, after a push or a restore paid that order, is told the order is paid, not
  /// refused; the renewal itself is the read-back's to record (`readBack`).
  func isLaterPeriod(_ purchase: GooglePurchase, of order: Order, on tx: PostgresTransaction)
    async throws -> Bool
  {
    guard order.tradeStatus == .tradeSuccess, order.transactionId != purchase.orderId else {
      return false
    }
    return try await !tx.query(
      """
      SELECT 1 FROM google_purchases
      WHERE purchase_token = \(purchase.token) AND trade_no = \(order.tradeNo)
      """
    ).isEmpty
  }
}
