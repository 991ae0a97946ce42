import Postgres

/// `trade_reports`: every report, stored before Apple is asked, so a report that waits on Apple
/// (or whose process dies mid-verification) is picked up again by the retry worker.
struct ReportStore: Sendable {
  let database: PostgresPool
  /// How long a claimed report stays invisible to other workers while it is being verified.
  let leaseMs: Int64
  /// How long a report is retried before it is given up (72 h by default).
  let windowMs: Int64
  /// The first retry of a report Apple could not answer; later ones back off from it.
  let retryBaseMs: Int64

  struct Due: Sendable {
    var id: Int64
    var tradeNo: String?
    var userId: String?
    var productId: String?
    var proof: Proof
    var attempts: Int
    var givesUpSoon: Bool
  }

  static func proofHash(_ proof: Proof) -> PostgresQuery {
    "encode(sha256(convert_to(\(proof.text), 'UTF8')), 'hex')"
  }

  /// Records a report that is about to be verified; it counts as pending until an outcome lands.
  func insertPending(
    tradeNo: String?, userId: String?, productId: String?, tradeStatus: String, proof: Proof
  ) async throws -> Int64 {
    var query: PostgresQuery = """
      INSERT INTO trade_reports (trade_no, user_id, product_id, trade_status, proof_kind, proof,
        outcome, attempts, next_attempt_at, give_up_at, proof_hash)
      VALUES (\(tradeNo), \(userId), \(productId), \(tradeStatus), \(proof.kind), \(proof.text), 'pending', 1,
        now() + \(leaseMs)::bigint * interval '1 millisecond',
        now() + \(windowMs)::bigint * interval '1 millisecond',
      """
    query.append(Self.proofHash(proof))
    query.append(") RETURNING id")
    guard let row = try await database.query(query).first else { return 0 }
    return try row.decode("id")
  }

  /// Records a report that needs no verification (TRADE_CLOSED) with its outcome.
  func insertFinal(
    tradeNo: String, tradeStatus: String, reason: String?, outcome: String, code: String?,
    on executor: any PostgresExecutor
  ) async throws {
    try await executor.execute(
      """
      INSERT INTO trade_reports (trade_no, trade_status, reason, outcome, outcome_code)
      VALUES (\(tradeNo), \(tradeStatus), \(reason), \(outcome), \(code))
      """)
  }

  /// A repeat of a report that already settled this order, recognised without asking Apple.
  func alreadySettled(tradeNo: String, proof: Proof) async throws -> Bool {
    var query: PostgresQuery =
      "SELECT 1 AS found FROM trade_reports WHERE trade_no = \(tradeNo) AND outcome = 'settled' AND proof_hash = "
    query.append(Self.proofHash(proof))
    query.append(" LIMIT 1")
    return try await !database.query(query).isEmpty
  }

  func finish(_ id: Int64, outcome: String, code: String?) async throws {
    try await database.execute(
      """
      UPDATE trade_reports SET outcome = \(outcome), outcome_code = \(code), next_attempt_at = NULL,
        updated_at = now()
      WHERE id = \(id) AND outcome = 'pending'
      """)
  }

  func retryLater(_ id: Int64, error: String, afterMs: Int64) async throws {
    try await database.execute(
      """
      UPDATE trade_reports SET last_error = \(error), updated_at = now(),
        next_attempt_at = now() + \(afterMs)::bigint * interval '1 millisecond'
      WHERE id = \(id) AND outcome = 'pending'
      """)
  }

  /// Takes up to `limit` due reports for this worker (a lease, not a held lock), so many
  /// instances can share the queue.
  func claimDue(limit: Int, backoffBaseMs: Int64) async throws -> [Due] {
    let rows = try await database.query(
      """
      UPDATE trade_reports r SET attempts = r.attempts + 1, updated_at = now(),
        next_attempt_at = now() + \(leaseMs)::bigint * interval '1 millisecond'
      WHERE r.id IN (
        SELECT id FROM trade_reports WHERE outcome = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
      RETURNING r.id, r.trade_no, r.user_id, r.product_id, r.proof_kind, r.proof, r.attempts,
        (now() + \(backoffBaseMs)::bigint * interval '1 millisecond' * power(2, least(r.attempts, 20)) > r.give_up_at)
          AS gives_up_soon
      """)
    return try rows.map { row in
      let kind: String = try row.decode("proof_kind")
      let text: String = try row.decode("proof")
      return Due(
        id: try row.decode("id"), tradeNo: try row.decodeIfPresent("trade_no"),
        userId: try row.decodeIfPresent("user_id"),
        productId: try row.decodeIfPresent("product_id"),
        proof: kind == "receipt" ? .receipt(text) : .signedTransaction(text),
        attempts: try row.decode("attempts"), givesUpSoon: try row.decode("gives_up_soon"))
    }
  }

  /// Transaction ids among `ids` that already settled an order other than `tradeNo`.
  func usedElsewhere(_ ids: [String], tradeNo: String) async throws -> Set<String> {
    var used: Set<String> = []
    for id in ids {
      let rows = try await database.query(
        """
        SELECT 1 AS used FROM apple_transactions
        WHERE transaction_id = \(id) AND trade_no IS NOT NULL AND trade_no <> \(tradeNo)
        """)
      if !rows.isEmpty { used.insert(id) }
    }
    return used
  }
}
