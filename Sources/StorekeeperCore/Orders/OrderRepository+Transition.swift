import Postgres

extension OrderRepository {
  /// Which orders a transition applies to.
  enum Target: Sendable {
    case order(String)
    /// A query that yields `trade_no`s (the expiry sweep's batch).
    case selected(PostgresQuery)
  }

  /// The payment that moves an order to `TRADE_SUCCESS`. `paidAsOrder`: an admin transfer's
  /// order is paid when the order it takes the purchase from was (a non-renewing pass runs
  /// from its payment: paid now, each transfer gave a new owner its whole duration again).
  /// `quantity`: the order is resized to it as it is paid (a Google Play purchase, whose
  /// quantity the user chose in Google's purchase screen), its amount at its unit price.
  struct Payment: Sendable {
    var transactionId: String
    var environment: String
    var paidAsOrder: String? = nil
    var quantity: Int32? = nil
  }

  /// The one way an order changes state. `transition` must come from `OrderStateMachine`; the
  /// update is guarded by its `from`, so an order that moved meanwhile is left alone (and
  /// not returned). Its `order_events` row is written in the same statement.
  ///
  /// `requires` runs first, as the CTE `claim`: the order changes only if it yields a row
  /// (settlement claims the Apple transaction this way). `effects` run in the same statement as
  /// further CTEs and may read the changed rows as `changed` (ledger rows, report outcomes), so
  /// a change and its consequences commit together even outside an explicit transaction.
  /// Effects are data-modifying statements without `RETURNING` (one is added here).
  ///
  /// The events of a change of state (`order.paid`, `order.closed`, `order.reopened`, after
  /// `events` given for the order's user, and what the change did to balances and entitlements)
  /// are appended last, by a CTE that depends on every other one, so the user's state it records
  /// includes them (`outbox`).
  @discardableResult
  func transition(
    _ target: Target, _ transition: OrderTransition, cause: OrderEventCause,
    detail: JSONValue = .object([:]), payment: Payment? = nil, requires claim: PostgresQuery? = nil,
    effects: [PostgresQuery] = [], events: [EventDraft] = [], on executor: any PostgresExecutor
  ) async throws -> [Order] {
    precondition(
      (payment != nil)
        == (transition.to == .tradeSuccess && transition.from != .tradeSuccess
          && transition.reason != .refundReversed),
      "a payment is given exactly when an unpaid order is paid")
    var query: PostgresQuery = "WITH "
    if let claim {
      query.append("claim AS (")
      query.append(claim)
      query.append("), ")
    }
    query.append(
      """
      changed AS (
        UPDATE orders SET trade_status = \(transition.to), close_reason = \(transition.closeReason),
          updated_at = now(), \(Self.closedAt(transition)), \(Self.verification(transition)),
          paid_at = CASE WHEN \(payment?.transactionId)::text IS NULL THEN paid_at
                         ELSE coalesce((SELECT f.paid_at FROM orders f
                                        WHERE f.trade_no = \(payment?.paidAsOrder)::text),
                                       now()) END,
          transaction_id = coalesce(\(payment?.transactionId)::text, transaction_id),
          environment = coalesce(\(payment?.environment)::text, environment),
          quantity = coalesce(\(payment?.quantity)::int, quantity),
          amount = CASE WHEN \(payment?.quantity)::int IS NULL THEN amount
                        ELSE unit_price * \(payment?.quantity)::int END
        WHERE trade_status = \(transition.from) AND
      """)
    switch target {
    case .order(let tradeNo): query.append(" trade_no = \(tradeNo)")
    case .selected(let selection):
      // An array, so the selection runs once (an InitPlan): as `IN (...)` the planner may rescan
      // it per candidate row, and each rescan's SKIP LOCKED passes over the rows this statement
      // already changed and takes more, past its LIMIT.
      query.append(" trade_no = ANY (ARRAY(")
      query.append(selection)
      query.append("))")
    }
    if claim != nil { query.append(" AND EXISTS (SELECT 1 FROM claim)") }
    query.append(
      """
        RETURNING *
      ), event AS (
        INSERT INTO order_events (trade_no, from_status, to_status, reason, cause, detail)
        SELECT trade_no, \(transition.from), \(transition.to), \(transition.reason), \(cause),
               \(detail.parameterText)::jsonb
        FROM changed
      )
      """)
    for (index, effect) in effects.enumerated() {
      query.append(", effect\(unescaped: String(index)) AS (")
      query.append(effect)
      query.append(" RETURNING 1)")
    }
    let orderEvent = EventType.of(transition)
    let emits = orderEvent != nil || !events.isEmpty
    if emits {
      // One call per user, in user order (so two batches lock users' sequences alike), over
      // the user's events aggregated from `changed`.
      query.append(", emitted AS (SELECT ")
      query.append(try outbox.call(user: "g.user_id", events: "g.events"))
      query.append(" AS written FROM (SELECT c.user_id, ")
      query.append(try Self.eventsJSON(events, orderEvent, transition: transition, cause: cause))
      query.append(" AS events FROM changed c")
      // Each count reads its CTE to the end, so the state is read after every change is made.
      // One count over a UNION ALL of them did not: the events missed the ledger's rows (0007).
      if claim != nil { query.append(", (SELECT count(*) FROM claim) AS done_claim") }
      for index in effects.indices {
        query.append(
          ", (SELECT count(*) FROM effect\(unescaped: String(index))) AS done\(unescaped: String(index))"
        )
      }
      query.append(" GROUP BY c.user_id ORDER BY c.user_id) g)")
    }
    query.append(" SELECT \(unescaped: Order.columns) FROM changed")
    if emits { query.append(" WHERE (SELECT count(*) FROM emitted) >= 0") }
    return try await executor.query(query).map(Order.init(row:))
  }

  /// Entering `TRADE_CLOSED` stamps the time; staying keeps it; leaving clears it.
  private static func closedAt(_ transition: OrderTransition) -> PostgresQuery {
    switch (transition.from, transition.to) {
    case (.tradeClosed, .tradeClosed): "closed_at = closed_at"
    case (_, .tradeClosed): "closed_at = now()"
    default: "closed_at = NULL"
    }
  }

  /// A payment ends any verification; giving up marks it failed; nothing else touches it.
  private static func verification(_ transition: OrderTransition) -> PostgresQuery {
    if transition.reason == .verificationGaveUp {
      return "verification = \(VerificationState.failed)"
    }
    return transition.to == .tradeSuccess ? "verification = NULL" : "verification = verification"
  }
}
