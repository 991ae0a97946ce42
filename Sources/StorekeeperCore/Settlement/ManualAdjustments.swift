import Postgres

/// Manual adjustments of a user's balance, made by support ("I paid but got nothing"). Every
/// one writes a `ledger_adjustments` row (who, why), the ledger row that moves the balance
/// (through `Ledger.adjust`, so balances are still only sums of the ledger) and its
/// `admin_audit` row, in one transaction: all three commit together or none does.
package struct ManualAdjustments: Sendable {
  let database: PostgresPool
  let outbox: EventOutbox

  package init(database: PostgresPool, outbox: EventOutbox) {
    self.database = database
    self.outbox = outbox
  }

  /// The adjustment made, and whether this call made it (false: an earlier request with the
  /// same Idempotency-Key did, and this one changed nothing).
  package struct Outcome: Sendable {
    package var adjustment: LedgerAdjustment
    package var created: Bool
    /// The user's balance of the asset after the adjustment.
    package var balance: Int64
  }

  /// Applies `request` once per (admin, Idempotency-Key). Everything an adjustment writes is
  /// written here, on `tx`, so it all commits exactly when the adjustment does.
  package func applyAdjustment(_ request: AdjustmentRequest, by actor: AdminActor) async throws
    -> Outcome
  {
    try await database.withTransaction { tx in
      // ON CONFLICT waits for a concurrent request with the same key to end, then yields no row.
      let inserted = try await tx.queryFirst(
        """
        INSERT INTO ledger_adjustments (user_id, asset, amount, environment, reason, admin,
                                        idempotency_key, request_id)
        VALUES (\(request.userId), \(request.asset), \(request.amount), \(request.environment),
                \(request.reason), \(actor.name), \(request.idempotencyKey), \(actor.requestId))
        ON CONFLICT (admin, idempotency_key) DO NOTHING
        RETURNING \(unescaped: LedgerAdjustment.columns)
        """)
      guard let inserted else {
        let earlier = try await tx.queryFirst(
          """
          SELECT \(unescaped: LedgerAdjustment.columns) FROM ledger_adjustments
          WHERE admin = \(actor.name) AND idempotency_key = \(request.idempotencyKey)
          """)
        guard let earlier else { throw AdjustmentRefusal.keyReused }
        let adjustment = try LedgerAdjustment(row: earlier)
        // Bytes, not Swift's canonical equivalence: "café" precomposed and decomposed are two
        // requests, as the wallet's own replay check and the database see them.
        guard
          UserId.same(adjustment.userId, request.userId)
            && adjustment.asset.utf8.elementsEqual(request.asset.utf8)
            && adjustment.amount == request.amount
            && adjustment.environment.utf8.elementsEqual(request.environment.utf8)
            && adjustment.reason.utf8.elementsEqual(request.reason.utf8)
        else { throw AdjustmentRefusal.keyReused }
        return Outcome(
          adjustment: adjustment, created: false,
          balance: try await Self.balance(adjustment.userId, adjustment.asset, on: tx))
      }
      let adjustment = try LedgerAdjustment(row: inserted)
      try await tx.execute(Ledger.adjust(adjustment))
      // After the ledger row, so the event's user state (and the derived balance.changed)
      // includes the adjustment.
      try await outbox.append(
        [
          EventDraft(
            .adminAdjustment,
            [
              "adjustment_id": .number(String(adjustment.id)), "admin": .string(actor.name),
              "reason": .string(adjustment.reason), "asset": .string(adjustment.asset),
              "amount": .number(String(adjustment.amount)),
              "environment": .string(adjustment.environment),
            ])
        ], for: adjustment.userId, on: tx)
      try await AuditLog.record(
        .ledgerAdjusted, by: actor, targetId: adjustment.userId, before: JSONValue?.none,
        after: adjustment, on: tx)
      return Outcome(
        adjustment: adjustment, created: true,
        balance: try await Self.balance(adjustment.userId, adjustment.asset, on: tx))
    }
  }

  static func balance(_ userId: String, _ asset: String, on executor: any PostgresExecutor)
    async throws -> Int64
  {
    let row = try await executor.queryFirst(
      """
      SELECT coalesce(sum(amount), 0)::bigint AS total FROM ledger
      WHERE user_id = \(userId) AND asset = \(asset)
      """)
    return try row?.decode("total") ?? 0
  }

  /// A user's adjustments, newest first (one keyset page).
  package func list(userId: String, limit: Int, before: Int64?) async throws
    -> (items: [LedgerAdjustment], next: String?)
  {
    var query: PostgresQuery =
      "SELECT \(unescaped: LedgerAdjustment.columns) FROM ledger_adjustments WHERE user_id = \(userId)"
    if let before { query.append(" AND id < \(before)") }
    query.append(" ORDER BY id DESC LIMIT \(limit + 1)")
    let rows = try await database.query(query).map(LedgerAdjustment.init(row:))
    let page = KeysetPage.split(rows, limit: limit) { String($0.id) }
    return (page.items, page.next)
  }
}
