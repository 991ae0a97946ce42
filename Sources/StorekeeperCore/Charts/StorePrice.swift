/// What the buyer paid for an order as its store signed it, by the charts' definition: the
/// price and currency of the order's transaction in `chart_transactions`
/// (Migrations/repeatable/charts.sql: Apple's signed price; Google's order total from the
/// Orders API or, until it answers, the plan's recurring price), both or neither. The overview
/// and experiments' results count an order's money this way, with the order's own amount where
/// the store said no price, so neither disagrees with the revenue chart (a free trial is 0).
enum StorePrice {
  /// A `LEFT JOIN LATERAL` naming `<alias>.currency` and `<alias>.price` (both NULL when the
  /// store said no price) for the order whose trade number is the SQL expression `tradeNo`.
  /// A purchase an admin transferred away belongs to the transfer's order now: the order that
  /// bought it (`transferred`, a boolean expression) finds it by the transaction its transfer's
  /// event names (Apple's transaction id, Google's order id: the view's `export_key`). Each
  /// branch is an index probe of each store's table (unique `trade_no`, primary key).
  static func join(tradeNo: String, transferred: String, as alias: String) -> String {
    """
    LEFT JOIN LATERAL (
      SELECT c.currency, c.price FROM chart_transactions c
      WHERE c.trade_no = \(tradeNo) AND c.price IS NOT NULL AND c.currency IS NOT NULL
      UNION ALL
      SELECT c.currency, c.price FROM chart_transactions c
      WHERE \(transferred) AND c.price IS NOT NULL AND c.currency IS NOT NULL
        AND c.export_key = (
          SELECT v.detail ->> 'transaction_id' FROM order_events v
          WHERE v.trade_no = \(tradeNo) AND v.detail ? 'transaction_id'
          ORDER BY v.id DESC LIMIT 1)
      LIMIT 1) \(alias) ON true
    """
  }
}
