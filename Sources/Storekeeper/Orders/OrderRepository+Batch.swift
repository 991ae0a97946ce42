import Postgres

extension OrderRepository {
  /// One order wanted by a request that is written together with others.
  struct BatchItem: Sendable {
    var userId: String
    var productId: String
    var quantity: Int32
  }

  /// The orders of many requests in one statement over arrays: what `create` does for one,
  /// for each item. Within the batch a user's requests take that user's free slots in request
  /// order, so the `maxOpen` cap holds inside a batch as it does across them.
  ///
  /// Returns one outcome per item, in order; nil where the slot chosen was taken meanwhile by
  /// a concurrent writer (the caller runs that item again on its own, as `create` would).
  /// Throws when the statement fails as a whole; nothing of it is then written.
  func createBatch(
    _ items: [BatchItem], ttlSeconds: Int, maxOpen: Int, on executor: any PostgresExecutor
  ) async throws -> [CreateOutcome?] {
    let tradeNos = items.map { _ in TradeNumber.make() }
    let rows = try await executor.query(
      """
      WITH r AS (
        SELECT * FROM unnest(\(PostgresArray(items.map(\.userId)))::text[],
                             \(PostgresArray(items.map(\.productId)))::text[],
                             \(PostgresArray(items.map(\.quantity)))::int[],
                             \(PostgresArray(tradeNos))::text[],
                             \(PostgresArray(items.map { _ in AccountToken.make() }))::uuid[])
          WITH ORDINALITY AS r(user_id, product_id, quantity, trade_no, token, n)
      ), v AS (
        SELECT r.n, r.user_id, r.trade_no, r.token, r.quantity, p.product_id, p.price, p.currency,
               row_number() OVER (PARTITION BY r.user_id ORDER BY r.n) AS rank
        FROM r JOIN products p ON p.product_id = r.product_id
        WHERE p.active AND (p.type = \(ProductType.consumable) OR r.quantity = 1)
      ), f AS (
        SELECT u.user_id, s.slot, s.rank
        FROM (SELECT user_id, count(*) AS wanted FROM v GROUP BY user_id) u,
        LATERAL (
          SELECT g.n::smallint AS slot, row_number() OVER (ORDER BY g.n) AS rank
          FROM generate_series(1, \(maxOpen)::int) g(n)
          WHERE NOT EXISTS (
            SELECT 1 FROM orders x WHERE x.user_id = u.user_id AND x.open_slot_key = g.n)
          ORDER BY g.n LIMIT u.wanted
        ) s
      ), o AS (
        INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                            app_account_token, trade_status, expires_at, open_slot)
        SELECT v.trade_no, v.user_id, v.product_id, v.quantity, v.price, v.currency,
               v.price * v.quantity, v.token, \(TradeStatus.waitBuyerPay),
               now() + \(ttlSeconds)::int * interval '1 second', f.slot
        FROM v JOIN f ON f.user_id = v.user_id AND f.rank = v.rank
        -- One order of taking index entries for every writer, so two batches never wait on
        -- each other in a cycle.
        ORDER BY v.user_id, f.slot
        ON CONFLICT (user_id, open_slot_key) DO NOTHING
        RETURNING *
      ), e AS (
        INSERT INTO order_events (trade_no, to_status, reason, cause)
        SELECT trade_no, trade_status, \(OrderEventReason.created), \(OrderEventCause.api) FROM o
      )
      SELECT r.n, p.product_id IS NOT NULL AS product_found, p.type AS product_type,
        p.active AS product_active, f.slot IS NOT NULL AS slot_free, \(unescaped: Order.columnsOfO)
      FROM r
      LEFT JOIN products p ON p.product_id = r.product_id
      LEFT JOIN v ON v.n = r.n
      LEFT JOIN f ON f.user_id = v.user_id AND f.rank = v.rank
      LEFT JOIN o ON o.trade_no = r.trade_no
      ORDER BY r.n
      """)
    guard rows.count == items.count else {
      throw PostgresError(
        kind: .decoding, message: "a batch of \(items.count) orders came back as \(rows.count) rows"
      )
    }
    return try zip(items, rows).map { item, row in
      guard try row.decode("product_found", as: Bool.self) else { return .productNotFound }
      if try row.decodeIfPresent("trade_no", as: String.self) != nil {
        return .created(try Order(row: row))
      }
      let active: Bool = try row.decode("product_active")
      if !active { return .productInactive }
      let type: ProductType = try row.decode("product_type")
      if type != .consumable && item.quantity != 1 { return .quantityNotAllowed }
      let slotFree: Bool = try row.decode("slot_free")
      return slotFree ? nil : .tooManyOpenOrders
    }
  }
}
