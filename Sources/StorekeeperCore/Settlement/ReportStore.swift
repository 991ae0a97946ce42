import Foundation
import Postgres

/// `trade_reports` and `proofs`: every report, stored with its outcome. A report whose proof
/// needs Apple is stored as pending before Apple is asked, so one that waits on Apple (or whose
/// process dies mid-verification) is picked up again by the retry worker. Proofs are stored
/// once each, by hash, and purged `retentionMs` after their last report is done. A proof refused
/// as invalid is not kept: its report holds only its hash and size (`proof_size`), whether it
/// was refused before storing (`insertRefused`) or by Apple (purged on the next sweep).
package struct ReportStore: Sendable {
  let database: PostgresPool
  /// How long a claimed report stays invisible to other workers while it is being verified.
  let leaseMs: Int64
  package let policy: RetryPolicy
  package let clock: WallClock
  /// How long a proof is kept after the last report carrying it is settled or refused.
  var retentionMs: Int64 = 30 * 24 * 3_600_000

  package init(
    database: PostgresPool, leaseMs: Int64, policy: RetryPolicy, clock: WallClock,
    retentionMs: Int64 = 30 * 24 * 3_600_000
  ) {
    self.database = database
    self.leaseMs = leaseMs
    self.policy = policy
    self.clock = clock
    self.retentionMs = retentionMs
  }

  /// A report the retry worker took.
  package struct Due: Sendable {
    package var id: Int64
    package var tradeNo: String?
    package var userId: String?
    package var productId: String?
    package var proof: Proof
    package var attempts: Int
    package var firstAttemptMs: Int64
  }

  /// How a settlement records the report that brought its proof.
  package enum Record: Sendable {
    /// Stored before Apple was asked: marked settled.
    case stored(id: Int64)
    /// Verified without Apple (a signed transaction): stored now, as settled.
    case new(Proof)
  }

  static func proofHash(_ proof: Proof) -> PostgresQuery { "\(proof.hash)::text" }

  /// The writes that store the proof unless it is stored already and mark it used now (the
  /// upsert locks the row, so a purge at the same moment either finishes first — and the proof
  /// is stored anew — or sees it used), each the body of a CTE. A signed transaction's shared
  /// header goes to `proof_headers` first (`Proof.sharedHeader`; headers are never purged: one
  /// per signing certificate), unless `whole`: a proof the retry worker will read back (a
  /// pending report's) is kept whole, so an instance of the release before 0085 reads it too,
  /// and one stored split before is made whole again. With `when`, only if that query yields a
  /// row.
  func storeProof(_ proof: Proof, when condition: PostgresQuery? = nil, whole: Bool = false)
    -> [PostgresQuery]
  {
    let shared = whole ? nil : proof.sharedHeader
    var writes: [PostgresQuery] = []
    if let shared {
      var header: PostgresQuery = """
        INSERT INTO proof_headers (hash, header) SELECT \(shared.hash), \(shared.header)
        """
      Self.append(condition, to: &header)
      header.append(" ON CONFLICT (hash) DO NOTHING")
      writes.append(header)
    }
    var query: PostgresQuery = """
      INSERT INTO proofs (hash, kind, body, header_hash, last_used_at)
      SELECT \(proof.hash), \(proof.kind), \(shared?.rest ?? proof.text), \(shared?.hash)::text,
        \(clock.now())
      """
    Self.append(condition, to: &query)
    query.append(" ON CONFLICT (hash) DO UPDATE SET last_used_at = EXCLUDED.last_used_at")
    if whole {
      // The stored body is kept as it is (its TOAST pointer, not a copy) unless it was split.
      query.append(
        """
        , body = CASE WHEN proofs.header_hash IS NULL THEN proofs.body ELSE EXCLUDED.body END,
          header_hash = NULL
        """)
    }
    writes.append(query)
    return writes
  }

  private static func append(_ condition: PostgresQuery?, to query: inout PostgresQuery) {
    guard let condition else { return }
    query.append(" WHERE EXISTS (")
    query.append(condition)
    query.append(")")
  }

  /// `WITH` and the proof's writes as CTEs, for a statement that stores the proof beside its
  /// own write.
  func withProofStored(_ proof: Proof, whole: Bool = false) -> PostgresQuery {
    var query: PostgresQuery = "WITH "
    for (index, write) in storeProof(proof, whole: whole).enumerated() {
      if index > 0 { query.append(", ") }
      query.append("stored\(unescaped: String(index)) AS (")
      query.append(write)
      query.append(")")
    }
    query.append(" ")
    return query
  }

  /// A stored proof's text, whole again: its shared header, if it has one, before the rest.
  static let storedText = """
    (SELECT coalesce(h.header || '.', '') || p.body FROM proofs p
     LEFT JOIN proof_headers h ON h.hash = p.header_hash WHERE p.hash = r.proof_hash)
    """

  /// Records a report that is about to be verified by Apple; it stays pending until an outcome
  /// lands, and until its lease ends no worker takes it.
  func insertPending(
    tradeNo: String?, userId: String?, productId: String?, proof: Proof
  ) async throws -> Int64 {
    let now = clock.now()
    var query = withProofStored(proof, whole: true)
    query.append(
      """
      INSERT INTO trade_reports (trade_no, user_id, product_id, trade_status, proof_kind,
        outcome, attempts, created_at, next_attempt_at, give_up_at, proof_hash, proof_size)
      VALUES (\(tradeNo), \(userId), \(productId), \(TradeStatus.tradeSuccess), \(proof.kind),
        \(ReportOutcome.pending), 1, \(now), \(now.addingMs(leaseMs)),
        \(now.addingMs(policy.windowMs)), \(proof.hash), \(proof.size))
      RETURNING id
      """)
    guard let row = try await database.query(query).first else { return 0 }
    return try row.decode("id")
  }

  /// Records a report refused before its proof was stored: the local checks found it is not
  /// what it claims to be (an app receipt Apple did not sign, say), so only its hash and size
  /// are kept.
  func insertRefused(
    tradeNo: String?, userId: String?, productId: String?, proof: Proof, code: String
  ) async throws {
    try await database.execute(
      """
      INSERT INTO trade_reports (trade_no, user_id, product_id, trade_status, proof_kind,
        outcome, outcome_code, attempts, proof_hash, proof_size)
      VALUES (\(tradeNo), \(userId), \(productId), \(TradeStatus.tradeSuccess), \(proof.kind),
        \(ReportOutcome.invalid), \(code), 1, \(proof.hash), \(proof.size))
      """)
  }

  /// Records a report whose outcome is known at once; the proof's bytes are kept unless it was
  /// refused as invalid.
  func insertFinal(
    tradeNo: String, tradeStatus: TradeStatus, proof: Proof? = nil, reason: String? = nil,
    outcome: ReportOutcome, code: String?, on executor: (any PostgresExecutor)? = nil
  ) async throws {
    var query: PostgresQuery = ""
    if let proof, outcome != .invalid {
      query.append(withProofStored(proof))
    }
    query.append(
      """
      INSERT INTO trade_reports (trade_no, user_id, product_id, trade_status, proof_kind,
        reason, outcome, outcome_code, proof_hash, proof_size)
      SELECT trade_no, user_id, product_id, \(tradeStatus), \(proof?.kind), \(reason),
        \(outcome), \(code), \(proof?.hash)::text, \(proof?.size)::integer
      FROM orders WHERE trade_no = \(tradeNo)
      """)
    try await (executor ?? database).execute(query)
  }

  /// The statements a settlement runs beside its order transition (as CTEs that see the paid
  /// order as `changed`): the order's waiting reports are settled by this payment, and the report
  /// that brought it is stored or marked settled.
  func settledEffects(_ record: Record?) -> [PostgresQuery] {
    var effects: [PostgresQuery] = []
    let waiting: PostgresQuery = """
      UPDATE trade_reports SET outcome = \(ReportOutcome.settled), next_attempt_at = NULL,
        updated_at = now()
      WHERE trade_no IN (SELECT trade_no FROM changed)
        AND outcome IN (\(ReportOutcome.pending), \(ReportOutcome.received))
      """
    switch record {
    case .stored?, nil:
      // A stored report waits on this order like any other, so `waiting` settles it.
      break
    case .new(let proof)?:
      effects.append(contentsOf: storeProof(proof, when: "SELECT 1 FROM changed"))
      effects.append(
        """
        INSERT INTO trade_reports (trade_no, user_id, product_id, trade_status, proof_kind,
          outcome, attempts, proof_hash, proof_size)
        SELECT trade_no, user_id, product_id, \(TradeStatus.tradeSuccess), \(proof.kind),
          \(ReportOutcome.settled), 1, \(proof.hash)::text, \(proof.size)::integer
        FROM changed
        """)
    }
    effects.append(waiting)
    return effects
  }

  package func finish(
    _ id: Int64, outcome: ReportOutcome, code: String?, on executor: (any PostgresExecutor)? = nil
  ) async throws {
    try await (executor ?? database).execute(
      """
      UPDATE trade_reports SET outcome = \(outcome), outcome_code = \(code), next_attempt_at = NULL,
        updated_at = now()
      WHERE id = \(id) AND outcome = \(ReportOutcome.pending)
      """)
  }

  /// Ends a waiting report that was refused or found invalid and, in the same transaction,
  /// lets its order be swept again unless another report of it still waits
  /// (`OrderRepository.clearPendingVerification`): in two transactions, a connection lost
  /// between them left the order waiting on nothing, never expired, holding one of the user's
  /// open-order slots for good.
  package func finish(
    _ id: Int64, outcome: ReportOutcome, code: String?, releasing tradeNo: String?,
    orders: OrderRepository
  ) async throws {
    try await database.withTransaction { tx in
      if let tradeNo { try await Self.lockOrder(tradeNo, on: tx) }
      try await finish(id, outcome: outcome, code: code, on: tx)
      if let tradeNo { try await orders.clearPendingVerification(tradeNo, on: tx) }
    }
  }

  /// Schedules the report's next attempt. `attempt`: the claim this caller holds
  /// (`Due.attempts`); nothing changes once another worker has claimed the report since (its
  /// lease ran out), whose schedule is then the one that counts.
  package func retryLater(_ id: Int64, error: String, atMs: Int64, attempt: Int? = nil)
    async throws
  {
    try await database.execute(
      """
      UPDATE trade_reports SET last_error = \(error), updated_at = now(),
        next_attempt_at = \(Date(milliseconds: atMs))
      WHERE id = \(id) AND outcome = \(ReportOutcome.pending)
        AND (\(attempt)::int IS NULL OR attempts = \(attempt)::int)
      """)
  }

  /// Takes up to `limit` due reports for this worker (a lease, not a held lock), so many
  /// instances can share the queue.
  package func claimDue(limit: Int) async throws -> [Due] {
    let now = clock.now()
    let rows = try await database.query(
      """
      UPDATE trade_reports r SET attempts = r.attempts + 1, updated_at = now(),
        next_attempt_at = \(now.addingMs(leaseMs))
      WHERE r.id = ANY (ARRAY(
        SELECT id FROM trade_reports
        WHERE outcome = \(ReportOutcome.pending) AND next_attempt_at <= \(now)
        ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING r.id, r.trade_no, r.user_id, r.product_id, r.proof_kind, r.attempts,
        \(unescaped: Self.storedText) AS proof,
        (extract(epoch FROM r.created_at) * 1000)::bigint AS first_attempt_ms
      """)
    return try rows.map { row in
      Due(
        id: try row.decode("id"), tradeNo: try row.decodeIfPresent("trade_no"),
        userId: try row.decodeIfPresent("user_id"),
        productId: try row.decodeIfPresent("product_id"),
        proof: Proof(kind: try row.decode("proof_kind"), text: try row.decode("proof")),
        attempts: try row.decode("attempts"), firstAttemptMs: try row.decode("first_attempt_ms"))
    }
  }

  /// Deletes proofs whose every report was settled or refused more than `retentionMs` ago, a
  /// batch at a time, and at once (past a minute's grace) those whose every report was refused
  /// as invalid; a proof that a pending report still needs is never deleted. Reports keep the
  /// hash, so a repeat of a settled report is still recognised. Returns how many went.
  package func purgeProofs(limit: Int = 1000) async throws -> Int {
    let now = clock.now()
    let cutoff = now.addingMs(-retentionMs)
    // The grace keeps a proof an upsert has just used again: the row's own `last_used_at` is
    // what a concurrent re-use changes, and what the delete re-checks.
    let refusedCutoff = now.addingMs(-60_000)
    let rows = try await database.query(
      """
      DELETE FROM proofs WHERE hash = ANY (ARRAY(
        SELECT p.hash FROM proofs p
        WHERE (p.last_used_at < \(cutoff) AND NOT EXISTS (
            SELECT 1 FROM trade_reports r WHERE r.proof_hash = p.hash
              AND (r.outcome IN (\(ReportOutcome.pending), \(ReportOutcome.received))
                OR r.updated_at >= \(cutoff))))
          OR (p.last_used_at < \(refusedCutoff) AND NOT EXISTS (
            SELECT 1 FROM trade_reports r WHERE r.proof_hash = p.hash
              AND r.outcome <> \(ReportOutcome.invalid)))
        LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING hash
      """)
    return rows.count
  }

  /// Locks the order a waiting report ends for, before the report, as settlement takes them:
  /// two waiting reports of one order ended at once (refused, invalid or given up) would each
  /// see the other still pending (`anyPending`), and neither release the order, which then
  /// held an open-order slot for good.
  private static func lockOrder(_ tradeNo: String, on tx: PostgresTransaction) async throws {
    try await tx.execute("SELECT 1 FROM orders WHERE trade_no = \(tradeNo) FOR UPDATE")
  }

  /// Whether a report of order `tradeNo` still waits for Apple: while one does, the order waits
  /// with it, out of the sweeper's reach, whatever another report of it came to.
  static func anyPending(of tradeNo: String) -> PostgresQuery {
    """
    EXISTS (SELECT 1 FROM trade_reports
            WHERE trade_no = \(tradeNo) AND outcome = \(ReportOutcome.pending))
    """
  }

  /// Gives a report up and notes it on its order, in one transaction, if the caller's claim is
  /// still the report's latest (another worker may have claimed it since its lease ran out,
  /// and may be settling it).
  package func giveUp(_ report: Due, reason: String, orders: OrderRepository) async throws {
    try await database.withTransaction { tx in
      if let tradeNo = report.tradeNo { try await Self.lockOrder(tradeNo, on: tx) }
      let gaveUp = try await tx.query(
        """
        UPDATE trade_reports SET outcome = \(ReportOutcome.gaveUp), outcome_code = \(reason),
          next_attempt_at = NULL, updated_at = now()
        WHERE id = \(report.id) AND outcome = \(ReportOutcome.pending)
          AND attempts = \(report.attempts)
        RETURNING id
        """)
      guard !gaveUp.isEmpty, let tradeNo = report.tradeNo,
        let order = try await orders.find(tradeNo, on: tx)
      else { return }
      // Another report of the order still waiting for Apple decides it: until then the order
      // stays out of the sweeper's reach (`clearPendingVerification`).
      guard
        try await tx.query("SELECT \(Self.anyPending(of: tradeNo)) AS waiting").first?
          .decode("waiting", as: Bool.self) == false
      else { return }
      guard
        let transition = try? OrderStateMachine.transition(
          from: order.tradeStatus, closeReason: order.closeReason, on: .verificationGaveUp)
      else { return }
      try await orders.transition(
        .order(tradeNo), transition, cause: .retryWorker,
        detail: .object(["report_id": .number(String(report.id)), "last_error": .string(reason)]),
        on: tx)
    }
  }
}

extension Date {
  init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }

  func addingMs(_ ms: Int64) -> Date { addingTimeInterval(Double(ms) / 1000) }
}
