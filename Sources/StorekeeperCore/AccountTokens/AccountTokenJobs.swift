import Postgres

/// `app_account_token_jobs`: the Set App Account Token calls owed to Apple, written in the
/// transaction that assigns a purchase made outside the app to a user, so the assignment and
/// the call it owes commit together, and sent by whichever instance claims them first.
package struct AccountTokenJobs: Sendable {
  let database: PostgresPool
  let policy: RetryPolicy

  package init(database: PostgresPool, policy: RetryPolicy) {
    self.database = database
    self.policy = policy
  }

  /// How long a claim holds a job; past it another instance takes it over (the sender died).
  static let leaseSeconds = 120

  /// A settlement effect (a CTE after `changed`): the purchase `originalTransactionId` now pays
  /// `order`, so Apple is to hear the order's token. The first assignment wins; a later
  /// settlement of the same purchase (a renewal, a repeat) changes nothing.
  static func enqueueEffect(
    originalTransactionId: String, environment: String, order: Order
  ) -> PostgresQuery {
    """
    INSERT INTO app_account_token_jobs (original_transaction_id, environment, app_account_token,
      user_id, trade_no)
    SELECT \(originalTransactionId), \(environment), \(order.appAccountToken)::uuid,
      \(order.userId), \(order.tradeNo)
    WHERE EXISTS (SELECT 1 FROM changed)
    ON CONFLICT (original_transaction_id) DO NOTHING
    """
  }

  /// An admin moved the purchase to `order`: Apple is to hear the new owner's token, whatever
  /// it heard before, so the job starts again with it.
  static func reassign(
    originalTransactionId: String, environment: String, order: Order, on tx: PostgresTransaction
  ) async throws {
    try await tx.execute(
      """
      INSERT INTO app_account_token_jobs (original_transaction_id, environment, app_account_token,
        user_id, trade_no)
      VALUES (\(originalTransactionId), \(environment), \(order.appAccountToken)::uuid,
        \(order.userId), \(order.tradeNo))
      ON CONFLICT (original_transaction_id) DO UPDATE
        SET app_account_token = EXCLUDED.app_account_token, user_id = EXCLUDED.user_id,
          trade_no = EXCLUDED.trade_no, environment = EXCLUDED.environment,
          state = \(AccountTokenJobState.pending), attempts = 0, next_attempt_at = now(),
          last_error = NULL, queued_at = now(), finished_at = NULL
      """)
  }

  /// Claims up to `limit` due jobs; the claim moves `next_attempt_at` to the lease's end and
  /// counts the attempt, in one committed statement, so no other instance sends them meanwhile.
  package func claim(limit: Int) async throws -> [AccountTokenJob] {
    try await database.query(
      """
      UPDATE app_account_token_jobs j
      SET attempts = j.attempts + 1,
        next_attempt_at = now() + \(Self.leaseSeconds)::int * interval '1 second'
      WHERE j.original_transaction_id = ANY (ARRAY(
        SELECT original_transaction_id FROM app_account_token_jobs
        WHERE state = \(AccountTokenJobState.pending) AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING j.original_transaction_id, j.environment, j.app_account_token::text AS token,
        j.attempts, (extract(epoch FROM j.queued_at) * 1000)::bigint AS queued_ms,
        (extract(epoch FROM now()) * 1000)::bigint AS now_ms
      """
    ).map { row in
      AccountTokenJob(
        originalTransactionId: try row.decode("original_transaction_id"),
        environment: try row.decode("environment"), token: try row.decode("token"),
        attempt: Int(try row.decode("attempts", as: Int32.self)),
        queuedMs: try row.decode("queued_ms"), nowMs: try row.decode("now_ms"))
    }
  }

  /// What sending one claimed job came to.
  package enum Result: Sendable, Equatable {
    case sent
    /// Try again, not before `notBeforeMs` (Apple's `Retry-After`) when there is one.
    case retry(String, notBeforeMs: Int64?)
    case refused(String)
  }

  /// Records `result` against the claim it came from: a job queued again meanwhile (another
  /// token, attempts counted from 0) or taken over after its lease is left alone.
  package func record(_ job: AccountTokenJob, _ result: Result) async throws {
    let state: AccountTokenJobState
    var nextMs: Int64 = job.nowMs
    var error: String?
    switch result {
    case .sent: state = .sent
    case .refused(let why):
      state = .failed
      error = why
    case .retry(let why, let notBefore):
      error = why
      switch policy.decision(
        afterAttempt: job.attempt, firstAttemptMs: job.queuedMs, nowMs: job.nowMs)
      {
      case .retry(let atMs):
        state = .pending
        nextMs = max(atMs, notBefore ?? atMs)
      case .giveUp:
        state = .failed
        error = "gave up: \(why)"
      }
    }
    var query: PostgresQuery = """
      UPDATE app_account_token_jobs SET state = \(state), last_error = \(error),
        finished_at = CASE WHEN \(state != .pending)::boolean THEN now() END,
        next_attempt_at =
      """
    query.append(TransactionRecord.time(nextMs))
    query.append(
      """
       WHERE original_transaction_id = \(job.originalTransactionId)
        AND app_account_token = \(job.token)::uuid AND attempts = \(Int32(job.attempt))
        AND state = \(AccountTokenJobState.pending)
      """)
    try await database.execute(query)
  }
}
