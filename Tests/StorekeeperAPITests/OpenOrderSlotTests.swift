import Foundation
import HTTP
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Open-order slots (issue 23): a user below `maxOpen` is never refused however many creations
/// race, a user at it always is, and the slot search works from the user's taken slots, so a
/// limit of 10,000 works like one of 20.
@Suite(.database) struct OpenOrderSlotTests {
  private func create(_ h: DomainHarness, _ user: String, maxOpen: Int) async throws
    -> OrderRepository.CreateOutcome
  {
    try await h.orders.create(
      userId: user, productId: "gold.100", quantity: 1, ttlSeconds: 3600, maxOpen: maxOpen,
      on: h.database)
  }

  private func isCreated(_ outcome: OrderRepository.CreateOutcome) -> Bool {
    if case .created = outcome { return true }
    return false
  }

  private func isRefused(_ outcome: OrderRepository.CreateOutcome) -> Bool {
    if case .tooManyOpenOrders = outcome { return true }
    return false
  }

  private func openSlots(_ h: DomainHarness, _ user: String) async throws -> [Int] {
    try await h.database.query(
      "SELECT open_slot FROM orders WHERE user_id = \(user) AND trade_status = 'WAIT_BUYER_PAY' ORDER BY open_slot"
    ).map { Int(try $0.decode("open_slot", as: Int32.self)) }
  }

  /// Open orders holding `slots`, written directly: a user with thousands of open orders
  /// without making each through the API.
  private func holdSlots(_ h: DomainHarness, _ user: String, _ slots: [Int]) async throws {
    try await h.database.execute(
      """
      INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                          app_account_token, trade_status, expires_at, open_slot)
      SELECT 'held-' || \(user) || '-' || s, \(user), product_id, 1, price, currency, price,
             gen_random_uuid(), 'WAIT_BUYER_PAY', now() + interval '1 hour', s
      FROM products, unnest(\(PostgresArray(slots.map { Int32($0) }))::int[]) s
      WHERE product_id = 'gold.100'
      """)
  }

  private func groupCommit(_ h: DomainHarness, maxOpen: Int) -> OrderGroupCommit {
    OrderGroupCommit(
      database: h.database, orders: h.orders, idempotency: IdempotencyStore(database: h.database),
      ttlSeconds: 3600, maxOpen: maxOpen, logger: DomainHarness.logger)
  }

  @Test func theFreeSlotSearchFillsGapsAndCountsSlotsAboveALoweredLimit() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      try await holdSlots(h, "gaps", [1, 2, 4, 6])
      #expect(isCreated(try await create(h, "gaps", maxOpen: 6)))
      #expect(isCreated(try await create(h, "gaps", maxOpen: 6)))
      #expect(try await openSlots(h, "gaps") == [1, 2, 3, 4, 5, 6])
      #expect(isRefused(try await create(h, "gaps", maxOpen: 6)))
      // A limit lowered below the user's slots: they still count, and nothing is free.
      #expect(isRefused(try await create(h, "gaps", maxOpen: 4)))
      // Raised: the next slot up is free.
      #expect(isCreated(try await create(h, "gaps", maxOpen: 7)))
      #expect(try await openSlots(h, "gaps").last == 7)
    }
  }

  @Test func aBatchStopsAtALimitLoweredBelowSlotsTheUserHolds() async throws {
    // Slots 7 and 8 held, the limit lowered to 5: slots 1 to 5 are free, but three orders
    // more make five. Each order of the batch is judged with those before it.
    try await DomainHarness.with { h in
      try await h.addConsumable()
      try await holdSlots(h, "lowered", [7, 8])
      let results = await groupCommit(h, maxOpen: 5).flush(
        (0..<5).map { _ in
          OrderGroupCommit.Submission(
            order: .init(userId: "lowered", productId: "gold.100", quantity: 1), key: nil)
        })
      #expect(results.filter { (try? $0.get()) != nil }.count == 3)
      #expect(try await openSlots(h, "lowered").count == 5)
    }
  }

  @Test func anOrderWaitingOnAProductBeingChangedIsJudgedByTheChange() async throws {
    // The admin holds the product (FOR UPDATE) while an order of 5 is being made, then makes
    // it a non-consumable: the order is judged by the new type, not slipped past the lock.
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.database.withTransaction {
        tx -> Task<OrderRepository.CreateOutcome, any Error> in
        try await tx.execute("SELECT 1 FROM products WHERE product_id = 'gold.100' FOR UPDATE")
        let order = Task {
          try await h.orders.create(
            userId: "racer", productId: "gold.100", quantity: 5, ttlSeconds: 3600, maxOpen: 20,
            on: h.database)
        }
        // Until the order's statement waits on the product's lock (the only session of this
        // database that can), so that it is judged after the change, not before it.
        while try await h.database.query(
          """
          SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'
          """
        ).isEmpty {
          try await Task.sleep(for: .milliseconds(10))
        }
        try await tx.execute(
          "UPDATE products SET type = 'non_consumable' WHERE product_id = 'gold.100'")
        return order
      }
      let outcome = try await order.value
      if case .quantityNotAllowed = outcome {} else { Issue.record("\(outcome)") }
    }
  }

  @Test func aLimitOfTenThousandFillsToTheLastSlotAndRefusesPastIt() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      // Every slot but two taken, one in the middle and the last.
      try await holdSlots(h, "many", (1...10_000).filter { $0 != 5_000 && $0 != 10_000 })
      #expect(isCreated(try await create(h, "many", maxOpen: 10_000)))
      let batch = try await h.orders.createBatch(
        [.init(userId: "many", productId: "gold.100", quantity: 1)], ttlSeconds: 3600,
        maxOpen: 10_000, on: h.database)
      #expect(batch.allSatisfy { $0.map(isCreated) ?? false })
      #expect(try await openSlots(h, "many").count == 10_000)
      #expect(isRefused(try await create(h, "many", maxOpen: 10_000)))
      let refused = await groupCommit(h, maxOpen: 10_000).flush([
        .init(order: .init(userId: "many", productId: "gold.100", quantity: 1))
      ])
      guard case .failure(let error as OrderRefusal) = refused[0] else {
        Issue.record("expected a refusal, got \(refused[0])")
        return
      }
      #expect(error == .tooManyOpenOrders(limit: 10_000))
      // A new user at that limit takes a slot at once.
      #expect(isCreated(try await create(h, "fresh", maxOpen: 10_000)))
    }
  }

  @Test func racingCreationsBelowTheLimitAreNeverRefused() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<120 {
          group.addTask { isCreated(try await create(h, "erin", maxOpen: 1_000)) }
        }
        return try await group.reduce(into: [Bool]()) { $0.append($1) }
      }
      #expect(outcomes.allSatisfy { $0 })
      #expect(Set(try await openSlots(h, "erin")).count == 120)
    }
  }

  @Test func racingCreationsPastTheLimitMakeExactlyTheLimit() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<120 {
          group.addTask {
            let outcome = try await create(h, "fred", maxOpen: 30)
            #expect(isCreated(outcome) || isRefused(outcome))
            return isCreated(outcome)
          }
        }
        return try await group.reduce(into: [Bool]()) { $0.append($1) }
      }
      #expect(outcomes.filter { $0 }.count == 30)
      #expect(try await openSlots(h, "fred") == Array(1...30))
    }
  }

  @Test func racingCreationsOverASlotAboveALoweredLimitStopAtTheLimit() async throws {
    // Slot 40 held, the limit lowered to 20: the free slots are 1 to 19, so the unique index
    // alone stops the racers there; a snapshot's count let two that each saw one slot left
    // take two. With slots held under the limit as well (5 and 20, beside 33), the free ones
    // end at 18. Each creation holds its transaction a moment, as a keyed order's does until
    // its key's answer is written, so the racers' snapshots overlap.
    try await DomainHarness.with { h in
      try await h.addConsumable()
      for (round, held) in [[40], [40], [5, 20, 33], [5, 20, 33]].enumerated() {
        let user = "ivy-\(round)"
        try await holdSlots(h, user, held)
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
          for _ in 0..<60 {
            group.addTask {
              try await h.database.withTransaction { tx in
                let outcome = try await h.orders.create(
                  userId: user, productId: "gold.100", quantity: 1, ttlSeconds: 3600,
                  maxOpen: 20, on: tx)
                try await tx.execute("SELECT pg_sleep(0.02)")
                return isCreated(outcome)
              }
            }
          }
          return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(created == 20 - held.count)
        #expect(try await openSlots(h, user).count == 20)
      }
    }
  }

  /// Batches for one user written at once, as two instances' flushes are: their slot choices
  /// meet, and the losers are retried, never refused.
  @Test func concurrentBatchesForOneUserAreExactBothBelowAndAtTheLimit() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      for (user, maxOpen) in [("gina", 1_000), ("hank", 40)] {
        let commit = groupCommit(h, maxOpen: maxOpen)
        let results = await withTaskGroup(of: [Result<Order, any Error>].self) { group in
          for flush in 0..<4 {
            group.addTask {
              await commit.flush(
                (0..<24).map { i in
                  OrderGroupCommit.Submission(
                    order: .init(userId: user, productId: "gold.100", quantity: 1),
                    key: i % 3 == 0 ? "k-\(user)-\(flush)-\(i)" : nil)
                })
            }
          }
          return await group.reduce(into: []) { $0 += $1 }
        }
        let created = results.filter { (try? $0.get()) != nil }.count
        let refused = results.filter {
          if case .failure(let error as OrderRefusal) = $0 {
            error == .tooManyOpenOrders(limit: maxOpen)
          } else {
            false
          }
        }.count
        #expect(created == min(96, maxOpen), "\(user)")
        #expect(created + refused == 96, "\(user)")
        #expect(Set(try await openSlots(h, user)).count == min(96, maxOpen), "\(user)")
      }
    }
  }

  /// Keyed batches of the same users written at once, as several instances' flushes are. Each
  /// batch takes its slots in one statement, in the one order of `(user_id, slot)`, and writes
  /// the orders it left out only after it has committed: no batch waits for a slot while
  /// holding slots of an earlier statement, so none is ever a deadlock's victim. (With the
  /// lone retries inside the batch's transaction, these rounds met deadlocks that PostgreSQL
  /// broke after `deadlock_timeout`, and the batch went one order at a time.)
  @Test func keyedBatchesOfTheSameUsersNeverDeadlock() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let commit = groupCommit(h, maxOpen: 1_000)
      let users = ["kai", "lea", "max"]
      var created = 0
      for round in 0..<4 {
        let results = await withTaskGroup(of: [Result<Order, any Error>].self) { group in
          for flush in 0..<6 {
            group.addTask {
              await commit.flush(
                (0..<12).map { i in
                  OrderGroupCommit.Submission(
                    order: .init(
                      userId: users[(i + flush) % users.count], productId: "gold.100",
                      quantity: 1),
                    key: "k-\(round)-\(flush)-\(i)")
                })
            }
          }
          return await group.reduce(into: []) { $0 += $1 }
        }
        created += results.filter { (try? $0.get()) != nil }.count
      }
      #expect(commit.deadlocksBroken == 0)
      #expect(created == 4 * 6 * 12)
      var slots = 0
      for user in users { slots += Set(try await openSlots(h, user)).count }
      #expect(slots == 4 * 6 * 12)
    }
  }

  /// The cap is bound, not written into the text: the free-slot search's plan does not depend
  /// on it, so PostgreSQL settles on one generic plan (before issue 23 a bound cap made the
  /// generic plan expect a thousand slots and every execution was planned afresh). One
  /// session, so the statement's counters are the ones it used.
  @Test func theCreationStatementIsPlannedOnceAtALimitOfTenThousand() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var configuration = h.database.configuration
      configuration.maxConnections = 1
      let session = PostgresPool(configuration: configuration, logger: DomainHarness.logger)
      let plans: PostgresRow
      do {
        for round in 0..<8 {
          let outcome = try await h.orders.create(
            userId: "plan-\(round)", productId: "gold.100", quantity: 1, ttlSeconds: 3600,
            maxOpen: 10_000, on: session)
          #expect(isCreated(outcome))
        }
        plans = try #require(
          try await session.query(
            """
            SELECT generic_plans, custom_plans FROM pg_prepared_statements
            WHERE statement LIKE '%INSERT INTO orders%' AND statement LIKE '%random()%'
            """
          ).first)
        await session.shutdown()
      } catch {
        await session.shutdown()
        throw error
      }
      let generic: Int64 = try plans.decode("generic_plans")
      let custom: Int64 = try plans.decode("custom_plans")
      #expect(custom <= 5)
      #expect(generic >= 3)
    }
  }

  /// The guard against a loop with no end says "retry", never "limit".
  @Test func aCreationThatKeepsLosingRacesIsAnsweredRetryableNotAsTheLimit() throws {
    let new = NewOrder(userId: "ivy", productId: "gold.100", quantity: 1)
    do {
      _ = try new.created(.contended, maxOpen: 20)
      Issue.record("expected a refusal")
    } catch {
      #expect(error == .contended)
      let error = error.problem
      #expect(error.status == 503)
      #expect(error.code == "overloaded")
      #expect(error.headers["Retry-After"] == "1")
    }
  }
}
