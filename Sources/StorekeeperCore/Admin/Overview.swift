import Postgres

/// The console's first page: money coming in, work waiting on each store, whether Apple still
/// notifies.
package struct Overview: Encodable, Sendable {
  struct Day: Encodable, Sendable {
    var day: String
    var currency: String
    var paidOrders: Int64
    /// What the orders' buyers paid, as decimal text (no binary floating point) with the
    /// currency's fraction digits: each order's store price where the store signed one
    /// (`StorePrice`, the revenue chart's), else its amount.
    var revenue: String

    enum CodingKeys: String, CodingKey {
      case day, currency
      case paidOrders = "paid_orders"
      case revenue
    }
  }

  var days: Int
  var daily: [Day]
  /// Reports whose verification waits on Apple, and on Google Play (a slow payment method
  /// Google says is pending, or Google unreachable): one health signal per store.
  var reportsWaiting: Int64
  var reportsWaitingGoogle: Int64
  var lastNotificationAt: String?
  var lastNotificationAgeSeconds: Int64?

  enum CodingKeys: String, CodingKey {
    case days, daily
    case reportsWaiting = "reports_waiting"
    case reportsWaitingGoogle = "reports_waiting_google"
    case lastNotificationAt = "last_notification_at"
    case lastNotificationAgeSeconds = "last_notification_age_seconds"
  }

  package static let maxDays = 366

  /// Production orders paid in the last `days` UTC days (today included): the days are
  /// counted back in UTC, never in the session's zone, whose changes of clock would move the
  /// window's start by an hour. A transfer re-pays
  /// a purchase already counted, a Family Sharing copy was paid by its purchaser, and sandbox
  /// purchases are not money, so none of them is counted. An order counts in the currency the
  /// store charged it in, at the price the store signed (a free trial is 0), as the revenue
  /// chart does; at its own amount where the store said no price.
  package static func load(days: Int, database: PostgresPool) async throws -> Overview {
    let price = StorePrice.join(
      tradeNo: "o.trade_no", transferred: "o.close_reason = 'transferred'", as: "sp")
    let rows = try await database.query(
      """
      SELECT day, currency, count(*)::bigint AS paid_orders,
             trim_scale(round(sum(amount), 4))::text AS revenue
      FROM (SELECT to_char(o.paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                   coalesce(sp.currency, o.currency::text) AS currency,
                   coalesce(sp.price, o.amount) AS amount
            FROM orders o
            \(unescaped: price)
            WHERE o.paid_at IS NOT NULL
              AND o.paid_at >= (date_trunc('day', now() AT TIME ZONE 'UTC')
                                - make_interval(days => \(days - 1))) AT TIME ZONE 'UTC'
              AND coalesce(o.environment, 'Production') = 'Production' AND o.origin <> 'transfer'
              AND NOT storekeeper_paid_by_family_copy(o.trade_no, o.close_reason::text)) paid
      GROUP BY 1, 2 ORDER BY 1, 2
      """)
    let daily = try rows.map {
      let currency: String = try $0.decode("currency")
      return Day(
        day: try $0.decode("day"), currency: currency, paidOrders: try $0.decode("paid_orders"),
        revenue: Money.padded(
          try $0.decode("revenue"), exponent: Currency.exponent(of: currency) ?? 0))
    }
    let waiting = try await database.queryFirst(
      """
      SELECT count(*) FILTER (WHERE proof_kind IS DISTINCT FROM 'google_purchase')::bigint AS apple,
             count(*) FILTER (WHERE proof_kind = 'google_purchase')::bigint AS google
      FROM trade_reports WHERE outcome = 'pending'
      """)
    let last = try await database.queryFirst(
      """
      SELECT \(unescaped: SQLTime.rfc3339("received_at")),
             floor(extract(epoch FROM now() - received_at))::bigint AS age
      FROM apple_notifications ORDER BY seq DESC LIMIT 1
      """)
    return Overview(
      days: days, daily: daily, reportsWaiting: try waiting?.decode("apple") ?? 0,
      reportsWaitingGoogle: try waiting?.decode("google") ?? 0,
      lastNotificationAt: try last?.decode("received_at"),
      lastNotificationAgeSeconds: try last?.decode("age"))
  }
}
