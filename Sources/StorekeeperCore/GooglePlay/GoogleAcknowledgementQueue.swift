import Foundation
import Postgres

/// `google_acknowledgements`: the durable job that tells Google a credited purchase is
/// granted. Its row is written by the statement that credits the purchase, so a process killed
/// right after the credit still acknowledges it: the row is due, and any instance takes it
/// (`FOR UPDATE SKIP LOCKED`, then a lease), retrying with backoff until Google takes it.
package struct GoogleAcknowledgementQueue: Sendable {
  let database: PostgresPool
  let clock: WallClock
  /// Delays double from the base up to the cap (`REPORT_RETRY_BASE`, at most ten minutes),
  /// with no give-up: an acknowledgement is worth trying until Google's three days are over.
  let policy: RetryPolicy
  /// How long a claimed job is invisible to other workers while Google is asked.
  let leaseMs: Int64
  /// A job still open this long after its purchase was paid (`purchase_time`: when it became
  /// PURCHASED, as far as Google said) is an alert (`/readyz`, `/metrics`):
  /// Google refunds at three days, so a day leaves two for someone to act.
  package static let alertAfterMs: Int64 = 24 * 3_600_000
  package static let refundAfterMs: Int64 = 3 * 24 * 3_600_000

  package init(database: PostgresPool, clock: WallClock, baseMs: Int64, leaseMs: Int64) {
    self.database = database
    self.clock = clock
    policy = RetryPolicy(baseMs: baseMs, capMs: 600_000, windowMs: Self.refundAfterMs)
    self.leaseMs = leaseMs
  }

  /// The effect that queues the job beside the order's payment (a CTE reading `changed`);
  /// nil when Google already has what it needs.
  static func enqueue(_ purchase: GooglePurchase, product: Product) -> PostgresQuery? {
    guard let action = GoogleAcknowledgementAction.needed(for: purchase, product: product) else {
      return nil
    }
    var query: PostgresQuery = """
      INSERT INTO google_acknowledgements (purchase_token, action, package_name,
        google_product_id, purchase_time)
      SELECT \(purchase.token), \(action), \(purchase.packageName), \(purchase.googleProductId),
      """
    // `purchase_time` is when Google's three days start: when the purchase became PURCHASED,
    // later than its purchase time for one that was pending first.
    query.append(TransactionRecord.time(purchase.completedAtMs ?? purchase.purchaseTimeMs))
    query.append(" FROM changed ON CONFLICT (purchase_token) DO NOTHING")
    return query
  }

  package struct Job: Sendable {
    package var token: String
    package var action: GoogleAcknowledgementAction
    package var packageName: String
    package var googleProductId: String
    package var attempts: Int
  }

  /// Takes up to `limit` due jobs for this worker.
  package func claimDue(limit: Int) async throws -> [Job] {
    let now = clock.now()
    return try await database.query(
      """
      UPDATE google_acknowledgements a SET attempts = a.attempts + 1,
        next_attempt_at = \(now.addingMs(leaseMs))
      WHERE a.purchase_token = ANY (ARRAY(
        SELECT purchase_token FROM google_acknowledgements
        WHERE done_at IS NULL AND next_attempt_at <= \(now)
        ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING a.purchase_token, a.action, a.package_name, a.google_product_id, a.attempts
      """
    ).map { row in
      Job(
        token: try row.decode("purchase_token"), action: try row.decode("action"),
        packageName: try row.decode("package_name"),
        googleProductId: try row.decode("google_product_id"), attempts: try row.decode("attempts"))
    }
  }

  /// Closes the job; `error` says why when it ended without Google taking it.
  package func finish(_ token: String, error: String? = nil) async throws {
    try await database.execute(
      """
      UPDATE google_acknowledgements SET done_at = \(clock.now()), last_error = \(error)
      WHERE purchase_token = \(token) AND done_at IS NULL
      """)
  }

  /// Schedules the next attempt after `attempt` failed; returns when it is due.
  @discardableResult
  package func retryLater(_ token: String, attempt: Int, error: String) async throws -> Int64 {
    let atMs = clock.milliseconds + policy.delayMs(afterAttempt: attempt)
    try await database.execute(
      """
      UPDATE google_acknowledgements SET last_error = \(String(error.prefix(500))),
        next_attempt_at = \(Date(milliseconds: atMs))
      WHERE purchase_token = \(token) AND done_at IS NULL
      """)
    return atMs
  }

  /// The open jobs, for `/metrics` and `/readyz`.
  package struct Backlog: Sendable, Equatable {
    package var open: Int64
    /// Open past `alertAfterMs` from their purchase.
    package var overdue: Int64
    /// The oldest open job's purchase, in epoch milliseconds.
    package var oldestPurchaseMs: Int64?
    package var lastError: String?
  }

  package func backlog() async throws -> Backlog {
    let cutoff = clock.now().addingMs(-Self.alertAfterMs)
    guard
      let row = try await database.query(
        """
        SELECT count(*) AS open, count(*) FILTER (WHERE purchase_time < \(cutoff)) AS overdue,
          (extract(epoch FROM min(purchase_time)) * 1000)::bigint AS oldest_ms,
          (SELECT last_error FROM google_acknowledgements
           WHERE done_at IS NULL AND last_error IS NOT NULL
           ORDER BY purchase_time LIMIT 1) AS last_error
        FROM google_acknowledgements WHERE done_at IS NULL
        """
      ).first
    else { return Backlog(open: 0, overdue: 0) }
    return Backlog(
      open: try row.decode("open"), overdue: try row.decode("overdue"),
      oldestPurchaseMs: try row.decodeIfPresent("oldest_ms"),
      lastError: try row.decodeIfPresent("last_error"))
  }
}
