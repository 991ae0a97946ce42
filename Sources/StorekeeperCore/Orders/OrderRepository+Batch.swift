import Digest
import Postgres
import Synchronization

extension OrderRepository {
  /// One order wanted by a request that is written together with others.
  struct BatchItem: Sendable {
    var userId: String
    var productId: String
    var quantity: Int32
    var store: OrderStore = .appStore
    /// Priced at the catalog's price for this storefront, if it has one.
    var storefront: String? = nil
  }

  /// The orders of many requests in one statement over arrays: what `create` does for one,
  /// for each item whose product can be ordered and whose user has a slot free.
  ///
  /// The statement is kept to the work of the common case, since its cost per row is what
  /// bounds order creation: it writes the orders it can and returns only those. Every item left
  /// out (an unknown or inactive product, a quantity not allowed, no slot free, or a slot taken
  /// meanwhile by a concurrent writer) comes back nil, and the caller runs it again on its own
  /// through `create`, which tells which of these it was.
  ///
  /// A user's requests within the batch take that user's free slots in request order (the
  /// second takes the second free slot, and so on), so the `maxOpen` cap holds inside a batch
  /// as it does across them. The free slots are found from the user's taken ones
  /// (`freeSlots`), so the statement's cost does not grow with `maxOpen`.
  ///
  /// Throws when the statement fails as a whole; nothing of it is then written.
  func createBatch(
    _ items: [BatchItem], ttlSeconds: Int, maxOpen: Int, on executor: any PostgresExecutor
  ) async throws -> [CreateOutcome?] {
    // One draw of randomness for the whole batch, not five system calls per order.
    var random = SecureRandom(words: items.count * (TradeNumber.words + AccountToken.words))
    let tradeNos = items.map { _ in TradeNumber.make(using: &random) }
    let tokens = items.map { _ in AccountToken.make(using: &random) }
    var earlier: [String: Int32] = [:]
    // Keyed byte for byte: the statement's `user_id` comparisons are, so look-alike ids are
    // two users with slots of their own.
    let ranks = items.map { item -> Int32 in
      let user = UserId.key(item.userId)
      defer { earlier[user, default: 0] += 1 }
      return earlier[user] ?? 0
    }
    let arrays: [String?] = [
      PostgresArray(items.map(\.userId)).postgresText,
      PostgresArray(items.map(\.productId)).postgresText,
      PostgresArray(items.map(\.quantity)).postgresText,
      PostgresArray(tradeNos).postgresText,
      PostgresArray(tokens).postgresText,
      PostgresArray(ranks).postgresText,
      PostgresArray(items.map(\.store.rawValue)).postgresText,
      PostgresArray(items.map(\.storefront)).postgresText,
    ]
    let template = Self.batchTemplate(ttlSeconds: ttlSeconds, maxOpen: maxOpen)
    let query = PostgresQuery(
      unsafeSQL: template.sql, binds: arrays + template.binds.dropFirst(arrays.count))
    let rows = try await executor.query(query)
    var written: [String: PostgresRow] = [:]
    written.reserveCapacity(rows.count)
    for row in rows { written[try row.decode("trade_no", as: String.self)] = row }
    return try items.indices.map { index in
      guard let row = written[tradeNos[index]] else { return nil }
      let item = items[index]
      return .created(
        Order(
          tradeNo: tradeNos[index], userId: item.userId, productId: item.productId,
          quantity: item.quantity, price: try row.decode("price"),
          currency: try row.decode("currency"), amount: try row.decode("amount"),
          appAccountToken: tokens[index], tradeStatus: .waitBuyerPay, closeReason: nil,
          origin: .order, transactionId: nil, environment: nil, verification: nil,
          createdAt: try row.decode("created_at"), expiresAt: try row.decode("expires_at"),
          paidAt: nil, closedAt: nil, store: item.store))
    }
  }

  private struct BatchShape: Hashable {
    var ttlSeconds: Int
    var maxOpen: Int
  }

  /// The batch statement for one `ttlSeconds` and `maxOpen`, its eight arrays left empty: the
  /// text and every other bind are the same for every batch of an instance, so they are built
  /// once (building them, the free-slot subquery's renumbering included, was a share of every
  /// flush) and each batch only puts its arrays in front.
  private static func batchTemplate(ttlSeconds: Int, maxOpen: Int) -> PostgresQuery {
    let shape = BatchShape(ttlSeconds: ttlSeconds, maxOpen: maxOpen)
    if let template = batchTemplates.withLock({ $0[shape] }) { return template }
    let template = batchQuery(
      userIds: [], productIds: [], quantities: [], tradeNos: [], tokens: [], ranks: [],
      stores: [], storefronts: [], ttlSeconds: ttlSeconds, maxOpen: maxOpen)
    batchTemplates.withLock { templates in
      // An instance has one shape; tests make a few dozen. Bounded all the same.
      if templates.count >= 64 { templates.removeAll() }
      templates[shape] = template
    }
    return template
  }

  private static let batchTemplates = Mutex<[BatchShape: PostgresQuery]>([:])

  /// The batch statement itself; its first eight binds are the arrays, in this order.
  static func batchQuery(
    userIds: [String], productIds: [String], quantities: [Int32], tradeNos: [String],
    tokens: [String], ranks: [Int32], stores: [String], storefronts: [String?], ttlSeconds: Int,
    maxOpen: Int
  ) -> PostgresQuery {
    var query: PostgresQuery = """
      WITH r AS (
        SELECT * FROM unnest(\(PostgresArray(userIds))::text[],
                             \(PostgresArray(productIds))::text[],
                             \(PostgresArray(quantities))::int[],
                             \(PostgresArray(tradeNos))::text[],
                             \(PostgresArray(tokens))::uuid[],
                             \(PostgresArray(ranks))::int[],
                             \(PostgresArray(stores))::text[],
                             \(PostgresArray(storefronts))::text[])
          AS r(user_id, product_id, quantity, trade_no, token, rank, store, storefront)
      ), p AS MATERIALIZED (
        -- As `create` does: the product as it stands once an admin changing it has committed.
        SELECT product_id, type, active, price, currency FROM products
        WHERE product_id IN (SELECT product_id FROM r)
        FOR KEY SHARE
      ), pp AS MATERIALIZED (
        -- The storefront prices, each read once its product's row is locked (the join to p),
        -- so that a price that admin changed counts too (storefront_price.sql); once per
        -- product and storefront of the batch, not per order.
        SELECT k.product_id, k.storefront, f.price, f.currency
        FROM (SELECT DISTINCT r.product_id, r.storefront FROM r JOIN p USING (product_id)
              WHERE r.storefront IS NOT NULL) k
        CROSS JOIN LATERAL storekeeper_storefront_price(k.product_id, k.storefront) f
      ), o AS (
        INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                            app_account_token, trade_status, expires_at, open_slot, store)
        SELECT r.trade_no, r.user_id, p.product_id, r.quantity,
               coalesce(pp.price, p.price), coalesce(pp.currency, p.currency),
               coalesce(pp.price, p.price) * r.quantity, r.token, \(TradeStatus.waitBuyerPay),
               now() + \(ttlSeconds)::int * interval '1 second', s.slot, r.store
        FROM r
        JOIN p ON p.product_id = r.product_id AND p.active
          AND (p.type = \(ProductType.consumable) OR r.quantity = 1)
        LEFT JOIN pp ON pp.product_id = p.product_id AND pp.storefront = r.storefront
        CROSS JOIN LATERAL (
          SELECT f.slot FROM (
      """
    query.append(
      Self.freeSlots(user: "r.user_id", maxOpen: maxOpen, count: "r.rank + 1", earlier: "r.rank"))
    query.append(
      """
          ) f ORDER BY f.slot OFFSET r.rank LIMIT 1
        ) s
        -- One order of taking index entries for every writer, so two batches never wait on
        -- each other in a cycle.
        ORDER BY r.user_id, s.slot
        ON CONFLICT (user_id, open_slot_key) DO NOTHING
        RETURNING trade_no, unit_price, currency, amount, created_at, expires_at
      ), e AS (
        INSERT INTO order_events (trade_no, to_status, reason, cause)
        SELECT trade_no, \(TradeStatus.waitBuyerPay), \(OrderEventReason.created),
               \(OrderEventCause.api)
        FROM o
      )
      SELECT trade_no, unit_price::text AS price, currency, amount::text AS amount,
        \(unescaped: SQLTime.rfc3339("created_at")), \(unescaped: SQLTime.rfc3339("expires_at"))
      FROM o
      """)
    return query
  }
}
