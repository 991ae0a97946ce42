import Foundation
import Postgres

/// `orders` and `order_events`: creation, reads, the admin listing, and every change of an
/// order's state, each written with its event in the same statement.
package struct OrderRepository: Sendable {
  let database: PostgresPool
  /// Where every transition appends its events, in its own statement; its clock is the time
  /// the events' states are computed for (PostgreSQL's in `serve`, `DatabaseTime`).
  package var outbox: EventOutbox

  package init(database: PostgresPool, outbox: EventOutbox) {
    self.database = database
    self.outbox = outbox
  }

  package enum CreateOutcome: Sendable {
    case created(Order)
    case productNotFound
    case productInactive
    case quantityNotAllowed
    /// The user holds `maxOpen` unpaid orders already, as the creating statement itself saw
    /// (`freeSlots` found none).
    case tooManyOpenOrders
    /// The user was below the limit but `maxLostRaces` creations in a row lost their slot to
    /// another order of the same user. Retryable; never reached in practice (see `create`).
    case contended
  }

  /// One statement (one round trip, autocommit unless `executor` is a transaction): reads the
  /// product, snapshots its price, takes a free open-order slot of the user (none
  /// free: no order), inserts the order and its first event. Two creations racing for the same
  /// slot meet at the `orders_open_slot` unique index: the loser inserts nothing and runs
  /// again, seeing the winner's slot taken.
  ///
  /// The refusal is exact: `.tooManyOpenOrders` only when the statement's own snapshot shows
  /// the user at the limit (`freeSlots` empty). A lost race is retried, never reported as the
  /// limit.
  /// Each loss is to a distinct order of the same user that committed during this call (the
  /// loser waits for it, and every later attempt sees it), so the loop runs only while that
  /// user's own concurrent creations keep winning. The first attempt takes the lowest free
  /// slot (a user's slots stay compact, which keeps a lowered limit meaningful); a retry,
  /// which means others are creating for this user right now, picks at random among the
  /// first `spread` free slots, so the racers spread out instead of meeting again.
  package func create(
    userId: String, productId: String, quantity: Int32, store: OrderStore = .appStore,
    storefront: String? = nil, ttlSeconds: Int, maxOpen: Int = 20,
    on executor: any PostgresExecutor
  ) async throws -> CreateOutcome {
    for attempt in 0..<Self.maxLostRaces {
      if let outcome = try await createOnce(
        userId: userId, productId: productId, quantity: quantity, store: store,
        storefront: storefront, ttlSeconds: ttlSeconds,
        maxOpen: maxOpen, choices: attempt == 0 ? 1 : Self.spread, on: executor)
      {
        return outcome
      }
    }
    return .contended
  }

  /// Lost races one creation survives before it answers `.contended` (a retryable 503, never
  /// the limit's 409): a guard against a loop with no end, far past what a burst reaches.
  static let maxLostRaces = 1_000

  /// How many of a user's first free slots a creation picks among, so that concurrent
  /// creations for one user spread over different slots instead of all taking the lowest.
  static let spread = 32

  /// nil: the slot it chose was taken meanwhile (the user was below the limit). `choices`:
  /// how many of the lowest free slots it picks among, at random.
  private func createOnce(
    userId: String, productId: String, quantity: Int32, store: OrderStore, storefront: String?,
    ttlSeconds: Int, maxOpen: Int, choices: Int, on executor: any PostgresExecutor
  ) async throws -> CreateOutcome? {
    let tradeNo = TradeNumber.make()
    let token = AccountToken.make()
    let rows: [PostgresRow]
    do {
      var query: PostgresQuery = """
        WITH lp AS MATERIALIZED (
          -- The lock the order's foreign key takes anyway, taken before the type is judged: an
          -- admin changing the product (FOR UPDATE) is waited for and its change is what counts,
          -- so an order never slips past the type lock (quantity 5 of a non-consumable).
          SELECT product_id, type, active, price, currency FROM products
          WHERE product_id = \(productId)
          FOR KEY SHARE
        ), p AS (
          -- Priced for the app's storefront when the catalog has a price there: read once the
          -- lock is held, so a storefront price that admin changed is counted too (its row is
          -- not the locked one; storefront_price.sql).
          SELECT lp.product_id, lp.type, lp.active, coalesce(sp.price, lp.price) AS price,
                 coalesce(sp.currency, lp.currency) AS currency
          FROM lp LEFT JOIN LATERAL storekeeper_storefront_price(lp.product_id, \(storefront)::text)
            sp ON true
        ), f AS (
        """
      query.append(
        Self.freeSlots(
          user: "\(userId)", maxOpen: maxOpen, count: "\(unescaped: String(choices))"))
      query.append(
        """
        ), s AS (
          -- The count is written into the text (a constant of the code, 1 or `spread`), so
          -- each of the two statements has one plan that is right for it.
          SELECT slot FROM f ORDER BY random() LIMIT 1
        ), o AS (
          INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                              app_account_token, trade_status, expires_at, open_slot, store)
          SELECT \(tradeNo), \(userId), p.product_id, \(quantity)::int, p.price, p.currency,
                 p.price * \(quantity)::int, \(token)::uuid, \(TradeStatus.waitBuyerPay),
                 now() + \(ttlSeconds)::int * interval '1 second', s.slot, \(store)
          FROM p, s
          WHERE p.active AND (p.type = \(ProductType.consumable) OR \(quantity)::int = 1)
          ON CONFLICT (user_id, open_slot_key) DO NOTHING
          RETURNING *
        ), e AS (
          INSERT INTO order_events (trade_no, to_status, reason, cause)
          SELECT trade_no, trade_status, \(OrderEventReason.created), \(OrderEventCause.api) FROM o
        )
        SELECT p.type AS product_type, p.active AS product_active,
          EXISTS (SELECT 1 FROM s) AS slot_free, \(unescaped: Order.columnsOfO)
        FROM p LEFT JOIN o ON true
        """)
      rows = try await executor.query(query)
    } catch let error as PostgresError where error.sqlState == PostgresError.foreignKeyViolation {
      // The product was deleted between this statement's read and its insert (an admin DELETE
      // holds the row lock meanwhile): it is gone, as if it had never been read.
      return .productNotFound
    }
    guard let row = rows.first else { return .productNotFound }
    if try row.decodeIfPresent("trade_no", as: String.self) != nil {
      return .created(try Order(row: row))
    }
    let active: Bool = try row.decode("product_active")
    if !active { return .productInactive }
    let type: ProductType = try row.decode("product_type")
    if type != .consumable && quantity != 1 { return .quantityNotAllowed }
    let slotFree: Bool = try row.decode("slot_free")
    return slotFree ? nil : .tooManyOpenOrders
  }

  /// An order Storekeeper opens for a purchase that came without one (a receipt, a renewal),
  /// at the product's current price in the purchase's storefront (`storefront`, as the
  /// store signed it; the default price without one, or where the catalog has none), as an
  /// order the app made there would be, with its first event; nil when the product is unknown.
  func createForPurchase(
    userId: String, productId: String, quantity: Int32, origin: OrderOrigin,
    reason: OrderEventReason, cause: OrderEventCause, detail: JSONValue = .object([:]),
    store: OrderStore = .appStore, storefront: String? = nil, pricedAs: String? = nil,
    on executor: any PostgresExecutor
  ) async throws -> Order? {
    let detailText = detail.parameterText
    let storefront = storefront.flatMap(Storefront.canonical)
    // `pricedAs`: an order whose price this one keeps (a transfer's order is the same purchase,
    // bought at that price and in that currency, whatever the catalog says now).
    return try await executor.query(
      """
      WITH o AS (
        INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                            app_account_token, trade_status, origin, expires_at, store)
        SELECT \(TradeNumber.make()), \(userId), p.product_id, \(quantity)::int,
               coalesce(src.unit_price, pp.price, p.price),
               coalesce(src.currency, pp.currency, p.currency),
               coalesce(src.unit_price, pp.price, p.price) * \(quantity)::int, gen_random_uuid(),
               \(TradeStatus.waitBuyerPay), \(origin), now(), \(store)
        FROM products p
        LEFT JOIN product_prices pp
          ON pp.product_id = p.product_id AND pp.storefront = \(storefront)::text
        LEFT JOIN orders src ON src.trade_no = \(pricedAs)::text
        WHERE p.product_id = \(productId)
        RETURNING *
      ), e AS (
        INSERT INTO order_events (trade_no, to_status, reason, cause, detail)
        SELECT trade_no, trade_status, \(reason), \(cause), \(detailText)::jsonb FROM o
      )
      SELECT \(unescaped: Order.columns) FROM o
      """
    ).first.map(Order.init(row:))
  }

  /// The order; with `lock`, locked until `executor`'s transaction ends.
  package func find(
    _ tradeNo: String, lock: Bool = false, on executor: (any PostgresExecutor)? = nil
  )
    async throws -> Order?
  {
    try await (executor ?? database).query(
      """
      SELECT \(unescaped: Order.columns) FROM orders WHERE trade_no = \(tradeNo)
      \(unescaped: lock ? "FOR UPDATE" : "")
      """
    ).first.map(Order.init(row:))
  }

  /// The order locked `FOR NO KEY UPDATE` (what its own `UPDATE` takes), for a refund or its
  /// reversal, which take the user's lock after it: `FOR UPDATE` would also block the key check
  /// of a `debt_repaid` row a credit to the same user writes while holding that lock, and the
  /// two would deadlock.
  func findForRefund(_ tradeNo: String, on tx: PostgresTransaction) async throws -> Order? {
    try await tx.query(
      """
      SELECT \(unescaped: Order.columns) FROM orders WHERE trade_no = \(tradeNo)
      FOR NO KEY UPDATE
      """
    ).first.map(Order.init(row:))
  }

  package func events(_ tradeNo: String) async throws -> [OrderEvent] {
    try await database.query(
      "SELECT \(unescaped: OrderEvent.columns) FROM order_events WHERE trade_no = \(tradeNo) ORDER BY id"
    ).map(OrderEvent.init(row:))
  }

  package struct Filter: Sendable {
    package var tradeStatus: TradeStatus?
    package var userId: String?
    package var productId: String?
    package var createdFrom: Date?
    package var createdTo: Date?
    package var after: String?
    package var limit: Int

    package init(
      tradeStatus: TradeStatus? = nil, userId: String? = nil, productId: String? = nil,
      createdFrom: Date? = nil, createdTo: Date? = nil, after: String? = nil, limit: Int
    ) {
      self.tradeStatus = tradeStatus
      self.userId = userId
      self.productId = productId
      self.createdFrom = createdFrom
      self.createdTo = createdTo
      self.after = after
      self.limit = limit
    }
  }

  /// Keyset pages, newest first: trade numbers sort by creation time.
  package func list(_ filter: Filter) async throws -> (orders: [Order], next: String?) {
    var query: PostgresQuery = "SELECT \(unescaped: Order.columns) FROM orders WHERE true"
    if let status = filter.tradeStatus { query.append(" AND trade_status = \(status)") }
    if let user = filter.userId { query.append(" AND user_id = \(user)") }
    if let product = filter.productId { query.append(" AND product_id = \(product)") }
    if let from = filter.createdFrom { query.append(" AND created_at >= \(from)") }
    if let to = filter.createdTo { query.append(" AND created_at < \(to)") }
    if let after = filter.after { query.append(" AND trade_no < \(after)") }
    query.append(" ORDER BY trade_no DESC LIMIT \(filter.limit + 1)")
    let rows = try await database.query(query).map(Order.init(row:))
    let page = KeysetPage.split(rows, limit: filter.limit) { $0.tradeNo }
    return (page.items, page.next)
  }

  /// Marks that a report waits on Apple (so the sweeper leaves the order open meanwhile).
  /// Returns the order as it now stands, nil if it is paid meanwhile.
  func markVerificationPending(_ tradeNo: String) async throws -> Order? {
    try await database.query(
      """
      UPDATE orders SET verification = \(VerificationState.pending), updated_at = now()
      WHERE trade_no = \(tradeNo) AND trade_status <> \(TradeStatus.tradeSuccess)
      RETURNING \(unescaped: Order.columns)
      """
    ).first.map(Order.init(row:))
  }

  /// A report that waited on Apple ended without paying the order.
  package func clearPendingVerification(
    _ tradeNo: String, on executor: (any PostgresExecutor)? = nil
  ) async throws {
    // While another report of the order still waits for Apple, the order waits with it: the
    // sweeper would close it, and that report's payment reopen it.
    var query: PostgresQuery = """
      UPDATE orders SET verification = NULL, updated_at = now()
      WHERE trade_no = \(tradeNo) AND verification = \(VerificationState.pending) AND NOT
      """
    query.append(" ")
    query.append(ReportStore.anyPending(of: tradeNo))
    try await (executor ?? database).execute(query)
  }

  /// Closes orders left unpaid past their expiry, through the one transition function. Safe
  /// with many instances: each takes different rows (SKIP LOCKED). Orders whose payment is
  /// being verified are left alone.
  package func closeExpired(now: Date, limit: Int = 500) async throws -> Int {
    let due: PostgresQuery = """
      SELECT trade_no FROM orders
      WHERE trade_status = \(TradeStatus.waitBuyerPay) AND expires_at <= \(now)
        AND verification IS DISTINCT FROM \(VerificationState.pending)
      ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
      """
    let transition = try OrderStateMachine.transition(
      from: .waitBuyerPay, closeReason: nil, on: .expired)
    return try await self.transition(.selected(due), transition, cause: .sweeper, on: database)
      .count
  }
}

extension OrderRepository {
  /// What a report needs before it asks anyone: the order, its product, and whether this very
  /// proof already settled it (a repeat is answered without Apple). One round trip.
  package struct ReportContext: Sendable {
    var order: Order
    package var product: Product
    var proofSettled: Bool
  }

  package func reportContext(_ tradeNo: String, proof: Proof) async throws -> ReportContext? {
    var query: PostgresQuery = """
      SELECT \(unescaped: Order.columnsOfO), \(unescaped: Product.columnsAsProduct),
        o.trade_status = \(TradeStatus.tradeSuccess) AND EXISTS (
          SELECT 1 FROM trade_reports r
          WHERE r.trade_no = o.trade_no AND r.outcome = \(ReportOutcome.settled) AND r.proof_hash =
      """
    query.append(ReportStore.proofHash(proof))
    query.append(
      """
        ) AS proof_settled
      FROM orders o JOIN products p ON p.product_id = o.product_id
      WHERE o.trade_no = \(tradeNo)
      """)
    guard let row = try await database.query(query).first else { return nil }
    return ReportContext(
      order: try Order(row: row), product: try Product(row: row, prefix: "p_"),
      proofSettled: try row.decode("proof_settled"))
  }

  /// Locks the order for settlement and reads which of `transactionIds` already pay other
  /// orders, and which are revoked: by Apple's refund notifications (`RefundHistory.revokedAmong`)
  /// or as recorded from an earlier proof that showed the refund (a restore, while the
  /// notification was lost), which a proof signed before the refund does not undo. One
  /// round trip. The ids are an array probed through the primary key whatever the
  /// statistics say: as `IN (SELECT …)`, a generic plan made while few transactions had an order
  /// walked every transaction with one, on every settlement (bench/reports: 546 → 751/s).
  func lockForSettlement(
    _ tradeNo: String, transactionIds: [String], on tx: PostgresTransaction
  ) async throws -> (order: Order, usedElsewhere: Set<String>, revokedByApple: Set<String>)? {
    let ids = JSONValue.array(transactionIds.map { .string($0) }).parameterText
    var query: PostgresQuery = """
      SELECT \(unescaped: Order.columnsOfO),
        (SELECT coalesce(jsonb_agg(t.transaction_id), '[]')::text FROM apple_transactions t
         WHERE t.transaction_id = ANY (ARRAY(SELECT jsonb_array_elements_text(\(ids)::jsonb)))
           AND t.trade_no IS NOT NULL AND t.trade_no <> o.trade_no) AS used_elsewhere,
        (SELECT coalesce(jsonb_agg(t.transaction_id), '[]')::text FROM apple_transactions t
         WHERE t.transaction_id = ANY (ARRAY(SELECT jsonb_array_elements_text(\(ids)::jsonb)))
           AND t.revocation_date IS NOT NULL) AS recorded_revoked,
      """
    query.append(try RefundHistory.revokedAmong(ids))
    query.append(
      """
       AS revoked_by_apple
      FROM orders o WHERE o.trade_no = \(tradeNo) FOR UPDATE OF o
      """)
    guard let row = try await tx.query(query).first else { return nil }
    return (
      try Order(row: row), try Self.ids(row, "used_elsewhere"),
      try Self.ids(row, "revoked_by_apple").union(Self.ids(row, "recorded_revoked"))
    )
  }

  /// A column holding a JSON array of transaction ids.
  private static func ids(_ row: PostgresRow, _ column: String) throws -> Set<String> {
    let notIds = PostgresError(
      kind: .decoding, message: "\(column) is not an array of strings",
      column: column, decodingProblem: .badValue(type: "[String]"))
    guard case .array(let values) = try JSONValue(databaseText: try row.decode(column))
    else { throw notIds }
    return Set(
      try values.map { value in
        guard case .string(let id) = value else { throw notIds }
        return id
      })
  }
}

extension OrderRepository {
  /// The order of `store` whose `app_account_token` a purchase carries: a purchase pays only
  /// an order made for its own store (the app chooses the token, and an order for the other
  /// store waits for that store's purchase).
  func find(accountToken: String, store: OrderStore, lock: Bool, on executor: any PostgresExecutor)
    async throws -> Order?
  {
    try await executor.query(
      """
      SELECT \(unescaped: Order.columns) FROM orders
      WHERE app_account_token = \(accountToken)::uuid AND store = \(store)
      \(unescaped: lock ? "FOR UPDATE" : "")
      """
    ).first.map(Order.init(row:))
  }

  /// The user's oldest unpaid order of `store` for this product and quantity, locked: what a
  /// purchase that names no order pays. Nil when there is none.
  func openOrder(
    userId: String, productId: String, quantity: Int32, store: OrderStore,
    on tx: PostgresTransaction
  ) async throws -> Order? {
    try await tx.query(
      """
      SELECT \(unescaped: Order.columns) FROM orders
      WHERE user_id = \(userId) AND product_id = \(productId) AND quantity = \(quantity)
        AND store = \(store)
        AND (trade_status = \(TradeStatus.waitBuyerPay) OR (trade_status = \(TradeStatus.tradeClosed)
             AND close_reason IN (\(CloseReason.cancelled), \(CloseReason.failed), \(CloseReason.expired))))
      ORDER BY created_at, trade_no LIMIT 1 FOR UPDATE SKIP LOCKED
      """
    ).first.map(Order.init(row:))
  }
}

extension OrderRepository {
  /// The user's latest App Store order for the product still waiting for payment and made
  /// before `madeBeforeMs` (a purchase's date), locked; skipped while another transaction
  /// holds it. The latest, not the oldest: a user who opened the paywall, left it without a
  /// word, and bought on a second visit paid with the order of that visit, which the app
  /// reports.
  func waitingOrder(
    userId: String, productId: String, madeBefore madeBeforeMs: Int64, on tx: PostgresTransaction
  ) async throws -> Order? {
    var query: PostgresQuery = """
      SELECT \(unescaped: Order.columns) FROM orders
      WHERE user_id = \(userId) AND product_id = \(productId) AND quantity = 1
        AND store = \(OrderStore.appStore) AND trade_status = \(TradeStatus.waitBuyerPay)
        AND created_at <=
      """
    query.append(TransactionRecord.time(madeBeforeMs))
    query.append(" ORDER BY created_at DESC, trade_no DESC LIMIT 1 FOR UPDATE SKIP LOCKED")
    return try await tx.query(query).first.map(Order.init(row:))
  }

  /// A transferred order lets go of its Apple transaction (a transaction pays one order); its
  /// history keeps the id.
  func detachTransaction(_ tradeNo: String, on tx: PostgresTransaction) async throws {
    try await tx.execute(
      """
      UPDATE orders SET transaction_id = NULL, updated_at = now()
      WHERE trade_no = \(tradeNo) AND close_reason = \(CloseReason.transferred)
      """)
  }
}
