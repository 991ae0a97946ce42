import Foundation
import GooglePlay
import Postgres
import StorekeeperLogging

/// Records what the buyer paid for each Google order (`google_orders`) from the Orders API
/// (`orders.get`), since neither `purchases.products.get` nor `subscriptionsv2.get` says it for
/// the order. Asked after the credit has committed, never before it: a failure leaves the row
/// due, retried with backoff (from `REPORT_RETRY_BASE`, doubling, at most an hour apart) by
/// every instance's worker (`FOR UPDATE SKIP LOCKED`, then a lease), and never blocks or undoes
/// the credit. An order Google does not know (404/410) is not asked again.
package struct GoogleOrderPrices: Sendable {
  let database: PostgresPool
  let client: GooglePlayClient
  let monitor: GooglePlayMonitor
  let clock: WallClock
  let policy: RetryPolicy
  let leaseMs: Int64
  let logger: Logger

  package init(
    database: PostgresPool, client: GooglePlayClient, monitor: GooglePlayMonitor,
    clock: WallClock, baseMs: Int64, leaseMs: Int64, logger: Logger
  ) {
    self.database = database
    self.client = client
    self.monitor = monitor
    self.clock = clock
    policy = RetryPolicy(baseMs: baseMs, capMs: 3_600_000, windowMs: .max)
    self.leaseMs = leaseMs
    self.logger = logger
  }

  struct Due: Sendable {
    var orderId: String
    var renewal: Bool
    var attempts: Int
  }

  package func runOnce() async {
    do {
      while true {
        let due = try await claimDue(limit: 20)
        if due.isEmpty { return }
        for order in due { await process(order) }
      }
    } catch {
      logger.warning("Google order prices pass failed", ["error": .string("\(error)")])
    }
  }

  func claimDue(limit: Int) async throws -> [Due] {
    let now = clock.now()
    return try await database.query(
      """
      UPDATE google_orders o SET price_attempts = o.price_attempts + 1,
        price_due_at = \(now.addingMs(leaseMs))
      WHERE o.order_id = ANY (ARRAY(
        SELECT order_id FROM google_orders
        WHERE price_due_at IS NOT NULL AND price_due_at <= \(now)
        ORDER BY price_due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING o.order_id, o.renewal, o.price_attempts
      """
    ).map { row in
      Due(
        orderId: try row.decode("order_id"), renewal: try row.decode("renewal"),
        attempts: try row.decode("price_attempts"))
    }
  }

  func process(_ due: Due) async {
    let fields: [String: LogValue] = [
      "order_id": .string(due.orderId), "attempt": .int(due.attempts),
    ]
    do {
      let answer: GoogleOrder
      do {
        answer = try await client.order(due.orderId)
      } catch {
        try await failed(due, error, fields: fields)
        return
      }
      monitor.resolved()
      guard let total = answer.total, let micros = total.micros, let currency = total.currencyCode
      else {
        try await database.execute(
          """
          UPDATE google_orders SET price_due_at = NULL, price_error = 'no_total'
          WHERE order_id = \(due.orderId)
          """)
        logger.warning("Google named no total for the order", fields)
        return
      }
      // A renewal's own time is the order's: Storekeeper only learns of it when asked.
      let created = due.renewal ? answer.createDate : nil
      try await database.execute(
        """
        UPDATE google_orders SET price_micros = \(micros), currency = \(currency),
          price_source = 'order', price_due_at = NULL, price_error = NULL,
          purchased_at = coalesce(\(created), purchased_at)
        WHERE order_id = \(due.orderId)
        """)
      logger.info("Google order priced", fields)
    } catch {
      logger.warning(
        "Google order price bookkeeping failed",
        fields.merging(["error": .string("\(error)")]) {
          $1
        })
    }
  }

  /// Orders still waiting for their price, and of those the ones Google failed at least once,
  /// for `/metrics` and `/readyz`: when the oldest failing one was credited, and why its last
  /// lookup failed.
  package struct Backlog: Sendable, Equatable {
    package var due: Int64
    package var failing: Int64
    package var oldestFailingMs: Int64? = nil
    package var lastError: String? = nil
  }

  package func backlog() async throws -> Backlog {
    guard
      let row = try await database.query(
        """
        SELECT b.due, b.failing, f.price_error AS last_error,
          (extract(epoch FROM f.created_at) * 1000)::bigint AS oldest_failing_ms
        FROM (SELECT count(*) AS due, count(*) FILTER (WHERE price_error IS NOT NULL) AS failing
              FROM google_orders WHERE price_due_at IS NOT NULL) b
        LEFT JOIN LATERAL (
          SELECT created_at, price_error FROM google_orders
          WHERE price_due_at IS NOT NULL AND price_error IS NOT NULL
          ORDER BY created_at, order_id LIMIT 1) f ON true
        """
      ).first
    else { return Backlog(due: 0, failing: 0) }
    return Backlog(
      due: try row.decode("due"), failing: try row.decode("failing"),
      oldestFailingMs: try row.decodeIfPresent("oldest_failing_ms"),
      lastError: try row.decodeIfPresent("last_error"))
  }

  private func failed(_ due: Due, _ failure: GooglePlayFailure, fields: [String: LogValue])
    async throws
  {
    let reason = GooglePurchaseVerifier.describe(failure)
    if case .unknownToken = failure {
      try await database.execute(
        """
        UPDATE google_orders SET price_due_at = NULL, price_error = \(String(reason.prefix(500)))
        WHERE order_id = \(due.orderId)
        """)
      logger.warning("Google does not know the order to price", fields)
      return
    }
    if case .credentialsRefused(let status, let text) = failure {
      monitor.record(status.map { "Google answered \($0): \(text)" } ?? text)
    }
    let at = Date(milliseconds: clock.milliseconds + policy.delayMs(afterAttempt: due.attempts))
    try await database.execute(
      """
      UPDATE google_orders SET price_due_at = \(at), price_error = \(String(reason.prefix(500)))
      WHERE order_id = \(due.orderId)
      """)
    logger.warning(
      "Google order price not read; retrying", fields.merging(["reason": .string(reason)]) { $1 })
  }
}
