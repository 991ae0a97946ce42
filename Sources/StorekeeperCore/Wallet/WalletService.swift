import Postgres

/// Spending and granting balances (issue 26). A spend or grant is a `wallet_operations` row,
/// the ledger rows that move the balance (so balances stay sums of the ledger) and its event,
/// in one transaction. The user's event-sequence row is locked first: every change of a user's
/// ledger takes that lock (the ledger's trigger), so the balance read after it cannot change
/// before the spend commits, and two spends of one user run one after the other on every
/// instance. The cost of a spend is that of the lots it uses, not of the user's history.
package struct WalletService: Sendable {
  let database: PostgresPool
  let outbox: EventOutbox

  package init(database: PostgresPool, outbox: EventOutbox) {
    self.database = database
    self.outbox = outbox
  }

  /// The operation, and whether this call made it (false: a request with the same key did).
  package struct Outcome: Sendable {
    package var operation: WalletOperation
    package var created: Bool
  }

  /// Applies `request` once per (user, Idempotency-Key), or throws a `WalletRefusal`.
  package func apply(_ request: WalletRequest) async throws -> Outcome {
    do {
      return try await applyOnce(request)
    } catch let conflict as PostgresError where conflict.isTransientConflict {
      // PostgreSQL broke a deadlock or a serialization conflict by rolling this transaction
      // back: nothing of it was committed, and the key keeps a second try exactly once.
      return try await applyOnce(request)
    }
  }

  private func applyOnce(_ request: WalletRequest) async throws -> Outcome {
    try await database.withTransaction { tx in
      try await outbox.lock([request.userId], on: tx)
      if let earlier = try await earlier(request, on: tx) { return earlier }
      let balance = try await Self.balance(request.userId, request.asset, on: tx)
      if request.kind == .spend, balance < request.amount {
        throw WalletRefusal.insufficientBalance(balance: balance)
      }
      let after = request.kind == .spend ? balance - request.amount : balance + request.amount
      guard
        let inserted = try await tx.queryFirst(
          """
          INSERT INTO wallet_operations (user_id, asset, kind, amount, environment, reason,
                                         reference, caller, idempotency_key, request_id,
                                         balance_after)
          VALUES (\(request.userId), \(request.asset), \(request.kind), \(request.amount),
                  \(request.environment), \(request.reason), \(request.reference),
                  \(request.caller), \(request.idempotencyKey), \(request.requestId), \(after))
          RETURNING \(unescaped: WalletOperation.columns)
          """)
      else { throw WalletRefusal.keyReused }
      var operation = try WalletOperation(row: inserted)
      switch request.kind {
      case .spend:
        try await tx.execute(
          """
          SELECT storekeeper_wallet_debit(\(request.userId), \(request.asset), \(request.amount),
                                          \(operation.id))
          """)
        operation.lots = try await lots(of: operation.id, on: tx)
      case .grant:
        try await tx.execute(
          """
          INSERT INTO ledger (user_id, asset, amount, kind, environment, operation_id)
          VALUES (\(request.userId), \(request.asset), \(request.amount), 'reward',
                  \(request.environment ?? "Production"), \(operation.id))
          """)
      }
      // A credit may have repaid debt (its debt_repaid rows), so the balance is read again.
      operation.balanceAfter = try await Self.balance(request.userId, request.asset, on: tx)
      if operation.balanceAfter != after {
        try await tx.execute(
          """
          UPDATE wallet_operations SET balance_after = \(operation.balanceAfter)
          WHERE id = \(operation.id)
          """)
      }
      try await outbox.append([event(operation)], for: request.userId, on: tx)
      return Outcome(operation: operation, created: true)
    }
  }

  /// What an earlier request with the same key and body made, answered again; nil when no
  /// request made anything with that key. Read without the user's lock: a committed operation
  /// never changes, and one still being made is not there yet. The rate limits ask this of a
  /// request its user's bucket refuses, so a retry of a spend that went through is answered.
  package func replay(_ request: WalletRequest) async throws -> Outcome? {
    try await earlier(request, on: database)
  }

  /// The operation made with the request's key, or nil; `keyReused` when it was made with
  /// another body.
  private func earlier(_ request: WalletRequest, on executor: any PostgresExecutor) async throws
    -> Outcome?
  {
    guard
      let row = try await executor.queryFirst(
        """
        SELECT \(unescaped: WalletOperation.columns) FROM wallet_operations
        WHERE user_id = \(request.userId) AND idempotency_key = \(request.idempotencyKey)
        """)
    else { return nil }
    var operation = try WalletOperation(row: row)
    guard operation.matches(request) else { throw WalletRefusal.keyReused }
    operation.lots = try await lots(of: operation.id, on: executor)
    return Outcome(operation: operation, created: false)
  }

  private func event(_ operation: WalletOperation) -> EventDraft {
    var data: [String: JSONValue] = [
      "operation_id": .number(String(operation.id)), "asset": .string(operation.asset),
      "amount": .number(String(operation.amount)), "reason": .string(operation.reason),
      "balance": .number(String(operation.balanceAfter)),
    ]
    if let reference = operation.reference { data["reference"] = .string(reference) }
    switch operation.kind {
    case .spend:
      data["lots"] = .array(operation.lots.map(\.json))
      return EventDraft(.balanceSpent, data)
    case .grant:
      data["environment"] = .string(operation.environment ?? "Production")
      return EventDraft(.balanceGranted, data)
    }
  }

  private func lots(of operation: Int64, on executor: any PostgresExecutor) async throws
    -> [LotUse]
  {
    try await LotUse.of(
      debits: "SELECT id FROM ledger WHERE operation_id = \(operation)", on: executor)
  }

  /// The running balance (user_balances), not a sum over the ledger.
  static func balance(_ userId: String, _ asset: String, on executor: any PostgresExecutor)
    async throws -> Int64
  {
    let row = try await executor.queryFirst(
      "SELECT total FROM user_balances WHERE user_id = \(userId) AND asset = \(asset)")
    return try row?.decode("total") ?? 0
  }

  /// The user's ledger, newest first (one keyset page), with what each spend and grant said.
  package func ledger(userId: String, before: Int64?, limit: Int) async throws
    -> (items: [WalletEntry], next: String?)
  {
    var query: PostgresQuery = """
      SELECT \(unescaped: WalletEntry.columns) FROM ledger l
      LEFT JOIN wallet_operations o ON o.id = l.operation_id
      WHERE l.user_id = \(userId)
      """
    if let before { query.append(" AND l.id < \(before)") }
    query.append(" ORDER BY l.id DESC LIMIT \(limit + 1)")
    let rows = try await database.query(query).map(WalletEntry.init(row:))
    return KeysetPage.split(rows, limit: limit) { String($0.id) }
  }

  /// What refunds could not take back and the user still owes, per asset (nonzero only).
  package func debts(userId: String) async throws -> [String: Int64] {
    try await Self.debts(userId: userId, on: database)
  }

  /// `debts(userId:)` on any executor: the app's ledger and the admin's read the same.
  package static func debts(userId: String, on executor: any PostgresExecutor) async throws
    -> [String: Int64]
  {
    let rows = try await executor.query(
      """
      SELECT asset, sum(outstanding)::bigint AS owed FROM ledger_debts
      WHERE user_id = \(userId) AND outstanding > 0 GROUP BY asset
      """)
    var debts: [String: Int64] = [:]
    for row in rows { debts[try row.decode("asset")] = try row.decode("owed") }
    return debts
  }
}
