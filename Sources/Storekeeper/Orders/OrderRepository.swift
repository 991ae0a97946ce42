import Foundation
import HTTP
import Postgres

/// Orders in PostgreSQL: creation, reads, the admin listing and the expiry sweep.
struct OrderRepository: Sendable {
  let database: PostgresPool

  enum CreateOutcome: Sendable {
    case created(Order)
    case productNotFound
    case productInactive
    case quantityNotAllowed
  }

  /// One statement (one round trip, autocommit unless `executor` is a transaction): reads the
  /// product, snapshots its price, inserts the order and its first event.
  func create(
    userId: String, productId: String, quantity: Int32, ttlSeconds: Int,
    on executor: any PostgresExecutor
  ) async throws -> CreateOutcome {
    let tradeNo = TradeNumber.make()
    let token = AccountToken.make()
    let rows = try await executor.query(
      """
      WITH p AS (
        SELECT product_id, type, active, price, currency FROM products WHERE product_id = \(productId)
      ), o AS (
        INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                            app_account_token, trade_status, expires_at)
        SELECT \(tradeNo), \(userId), p.product_id, \(quantity)::int, p.price, p.currency,
               p.price * \(quantity)::int, \(token)::uuid, 'WAIT_BUYER_PAY',
               now() + \(ttlSeconds)::int * interval '1 second'
        FROM p WHERE p.active AND (p.type = 'consumable' OR \(quantity)::int = 1)
        RETURNING *
      ), e AS (
        INSERT INTO order_events (trade_no, to_status, reason, cause)
        SELECT trade_no, 'WAIT_BUYER_PAY', 'created', 'api' FROM o
      )
      SELECT p.type AS product_type, p.active AS product_active, \(unescaped: Order.columnsOfO)
      FROM p LEFT JOIN o ON true
      """)
    guard let row = rows.first else { return .productNotFound }
    if try row.decodeIfPresent("trade_no", as: String.self) != nil {
      return .created(try Order(row: row))
    }
    let active: Bool = try row.decode("product_active")
    return active ? .quantityNotAllowed : .productInactive
  }

  func find(_ tradeNo: String, on executor: (any PostgresExecutor)? = nil) async throws -> Order? {
    try await (executor ?? database).query(
      "SELECT \(unescaped: Order.columns) FROM orders WHERE trade_no = \(tradeNo)"
    ).first.map(Order.init(row:))
  }

  func events(_ tradeNo: String) async throws -> [OrderEvent] {
    try await database.query(
      "SELECT \(unescaped: OrderEvent.columns) FROM order_events WHERE trade_no = \(tradeNo) ORDER BY id"
    ).map(OrderEvent.init(row:))
  }

  struct Filter: Sendable {
    var tradeStatus: String?
    var userId: String?
    var productId: String?
    var createdFrom: Date?
    var createdTo: Date?
    var after: String?
    var limit: Int
  }

  /// Keyset pages, newest first: trade numbers sort by creation time.
  func list(_ filter: Filter) async throws -> (orders: [Order], next: String?) {
    var query: PostgresQuery = "SELECT \(unescaped: Order.columns) FROM orders WHERE true"
    if let status = filter.tradeStatus { query.append(" AND trade_status = \(status)") }
    if let user = filter.userId { query.append(" AND user_id = \(user)") }
    if let product = filter.productId { query.append(" AND product_id = \(product)") }
    if let from = filter.createdFrom { query.append(" AND created_at >= \(from)") }
    if let to = filter.createdTo { query.append(" AND created_at < \(to)") }
    if let after = filter.after { query.append(" AND trade_no < \(after)") }
    query.append(" ORDER BY trade_no DESC LIMIT \(filter.limit + 1)")
    var orders = try await database.query(query).map(Order.init(row:))
    var next: String?
    if orders.count > filter.limit {
      orders.removeLast()
      next = orders.last?.tradeNo
    }
    return (orders, next)
  }

  /// Closes orders left unpaid past their expiry. Safe with many instances: each takes
  /// different rows (SKIP LOCKED). Orders whose payment is being verified are left alone.
  func closeExpired(limit: Int = 500) async throws -> Int {
    try await database.execute(
      """
      WITH due AS (
        SELECT trade_no FROM orders
        WHERE trade_status = 'WAIT_BUYER_PAY' AND expires_at <= now()
          AND verification IS DISTINCT FROM 'pending'
        ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
      ), closed AS (
        UPDATE orders o SET trade_status = 'TRADE_CLOSED', close_reason = 'expired',
                            closed_at = now(), updated_at = now()
        FROM due WHERE o.trade_no = due.trade_no RETURNING o.trade_no
      )
      INSERT INTO order_events (trade_no, from_status, to_status, reason, cause)
      SELECT trade_no, 'WAIT_BUYER_PAY', 'TRADE_CLOSED', 'expired', 'sweeper' FROM closed
      """)
  }
}
