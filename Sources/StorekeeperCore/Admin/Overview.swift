import Postgres

/// The console's first page: money coming in, work waiting on each store, whether Apple still
/// notifies.
package struct Overview: Encodable, Sendable {
  struct Day: Encodable, Sendable {
    var day: String
    var currency: String
    var paidOrders: Int64
    /// The sum of the orders' amounts, as decimal text (no binary floating point).
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

  /// Production orders paid in the last `days` UTC days (today included). A transfer re-pays
  /// a purchase already counted, a Family Sharing copy was paid by its purchaser, and sandbox
  /// purchases are not money, so none of them is counted.
  package static func load(days: Int, database: PostgresPool) async throws -> Overview {
    let rows = try await database.query(
      """
      SELECT to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency::text AS currency,
             count(*)::bigint AS paid_orders, sum(amount)::text AS revenue
      FROM orders
      WHERE paid_at IS NOT NULL
        AND paid_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(days => \(days - 1))
        AND coalesce(environment, 'Production') = 'Production' AND origin <> 'transfer'
        AND NOT storekeeper_paid_by_family_copy(trade_no, close_reason::text)
      GROUP BY 1, 2 ORDER BY 1, 2
      """)
    let daily = try rows.map {
      Day(
        day: try $0.decode("day"), currency: try $0.decode("currency"),
        paidOrders: try $0.decode("paid_orders"), revenue: try $0.decode("revenue"))
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
