import Foundation
import HTTP
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Batches of orders written by `OrderGroupCommit.flush`, one batch at a time, so each test
/// knows exactly which requests share a statement.
// One case at a time: each opens a harness of its own, and run side by side with the rest of
// the suite they took the test server past its 200 connections.
@Suite(.serialized, .database) struct OrderGroupCommitTests {
  private func groupCommit(
    _ h: DomainHarness, maxOpen: Int = 20, maxFlushes: Int = 2,
    queueTimeout: Duration = .seconds(5)
  ) -> OrderGroupCommit {
    OrderGroupCommit(
      database: h.database, orders: h.orders, idempotency: IdempotencyStore(database: h.database),
      ttlSeconds: 3600, maxOpen: maxOpen, maxFlushes: maxFlushes, queueTimeout: queueTimeout,
      logger: DomainHarness.logger)
  }

  /// Runs `body` while another transaction holds the product's row: a flush's foreign-key
  /// check waits for it, as it would for a stalled disk or a host that vanished.
  private func holdingTheProduct<T: Sendable>(
    _ h: DomainHarness, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    let (holding, holds) = AsyncStream<Void>.makeStream()
    let (releasing, release) = AsyncStream<Void>.makeStream()
    let holder = Task {
      try await h.database.withTransaction { tx in
        try await tx.execute("SELECT 1 FROM products WHERE product_id = 'gold.100' FOR UPDATE")
        holds.yield()
        for await _ in releasing { break }
      }
    }
    for await _ in holding { break }
    let value: T
    do {
      value = try await body()
    } catch {
      release.yield()
      _ = try? await holder.value
      throw error
    }
    release.yield()
    try await holder.value
    return value
  }

  /// Waits until a session of this database waits for a lock (the flush, on the product).
  private func aFlushWaits(_ h: DomainHarness) async throws {
    for _ in 0..<1200 {
      let waiting: Int64 =
        try await h.database.query(
          """
          SELECT count(*)::bigint AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE NOT l.granted AND a.datname = current_database()
          """
        ).first?.decode("n") ?? 0
      if waiting > 0 { return }
      try await Task.sleep(for: .milliseconds(25))
    }
    // Thrown, not recorded: the test must not go on to wait behind a lock nobody releases.
    throw NoFlushWaited()
  }

  private struct NoFlushWaited: Error {}

  /// Waits until `condition` holds, polling; throws after half a minute. A bound on a hang
  /// (the lock is held until the test goes on), not on speed.
  private func until(_ condition: () -> Bool) async throws {
    for _ in 0..<6000 {
      if condition() { return }
      try await Task.sleep(for: .milliseconds(5))
    }
    throw NotMeanwhile()
  }

  private struct NotMeanwhile: Error {}

  @Test func anOrderNoFlushTookByItsDeadlineIsAnsweredUnavailableAndNeverWritten() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let commit = groupCommit(h, maxFlushes: 1, queueTimeout: .milliseconds(200))
      let (leader, late) = try await holdingTheProduct(h) {
        let leader = Task { try await commit.commit(submission("lead")) }
        try await aFlushWaits(h)
        // The one flush is stuck on the lock: this order waits for the next, past its bound,
        // and is answered while the lock is still held.
        let late = Task { try await commit.commit(submission("late")) }
        try await until { commit.queueTimeoutsAnswered == 1 }
        #expect(commit.waitingCount == 0)
        return (leader, late)
      }
      let error = try await #require(throws: PostgresError.self) { try await late.value }
      #expect(error.isUnavailable)
      #expect(error.kind == .poolTimeout)
      // The stuck flush had sent its order: it is written once the lock goes, and the late
      // one never is.
      _ = try await leader.value
      _ = try await commit.commit(submission("after"))
      #expect(try await orderCount(h, user: "lead") == 1)
      #expect(try await orderCount(h, user: "late") == 0)
      #expect(try await orderCount(h, user: "after") == 1)
      #expect(commit.queueTimeoutsAnswered == 1)
    }
  }

  @Test func anOrderWhoseClientLeftWhileItWaitedIsNeverWritten() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let commit = groupCommit(h, maxFlushes: 1, queueTimeout: .seconds(60))
      let (leader, gone, staying) = try await holdingTheProduct(h) {
        let leader = Task { try await commit.commit(submission("lead")) }
        try await aFlushWaits(h)
        let gone = Task { try await commit.commit(submission("gone")) }
        let staying = Task { try await commit.commit(submission("staying")) }
        try await until { commit.waitingCount == 2 }
        gone.cancel()
        // Withdrawn while the lock is still held.
        try await until { commit.waitingCount == 1 }
        return (leader, gone, staying)
      }
      await #expect(throws: CancellationError.self) { try await gone.value }
      // The order that stayed is written by the next flush; the one whose client left never.
      _ = try await leader.value
      _ = try await staying.value
      #expect(try await orderCount(h, user: "lead") == 1)
      #expect(try await orderCount(h, user: "staying") == 1)
      #expect(try await orderCount(h, user: "gone") == 0)
      #expect(commit.queueTimeoutsAnswered == 0)
    }
  }

  private func submission(
    _ user: String, _ product: String = "gold.100", quantity: Int32 = 1, key: String? = nil
  )
    -> OrderGroupCommit.Submission
  {
    .init(order: .init(userId: user, productId: product, quantity: quantity), key: key)
  }

  private func orderCount(_ h: DomainHarness, user: String) async throws -> Int {
    try #require(
      try await h.database.query("SELECT count(*) AS n FROM orders WHERE user_id = \(user)").first
    ).decode("n")
  }

  private func created(_ result: Result<Order, any Error>) throws -> [String: JSONValue] {
    let order = try result.get()
    guard case .object(let object) = try JSONParser.parse(order.json, maxDepth: 8) else {
      Issue.record("not an object")
      return [:]
    }
    return object
  }

  /// The refusal as the API answers it.
  private func refusal(_ result: Result<Order, any Error>) -> HTTPError? {
    guard case .failure(let error) = result else { return nil }
    return (error as? OrderRefusal)?.problem
  }

  @Test func anOrderTheDatabaseRejectsFailsAloneAndItsNeighboursAreCreated() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      // A rule only this database has: the batch statement holding mallory's order fails as
      // a whole, and the orders are written again one by one.
      try await h.database.execute(
        "ALTER TABLE orders ADD CONSTRAINT no_mallory CHECK (user_id <> 'mallory')")
      let results = await groupCommit(h).flush([
        submission("alice"), submission("mallory"), submission("bob"),
      ])
      #expect(try created(results[0])["user_id"] == .string("alice"))
      #expect(try created(results[2])["user_id"] == .string("bob"))
      guard case .failure(let error as PostgresError) = results[1] else {
        Issue.record("expected mallory's order to fail, got \(results[1])")
        return
      }
      #expect(error.sqlState == PostgresError.checkViolation)
      #expect(try await orderCount(h, user: "alice") == 1)
      #expect(try await orderCount(h, user: "bob") == 1)
      #expect(try await orderCount(h, user: "mallory") == 0)
    }
  }

  /// PostgreSQL plans a prepared statement afresh on every execution when its generic plan
  /// looks dearer than one made for the values bound; for the batch statement that planning
  /// cost more than the rest of it (a bound open-order cap made the generic plan expect a
  /// thousand slots). One session, so the statement's counters are the ones it used.
  @Test func theBatchStatementIsPlannedOnceAndItsPlanReused() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var configuration = h.database.configuration
      configuration.maxConnections = 1
      let session = PostgresPool(configuration: configuration, logger: DomainHarness.logger)
      let plans: PostgresRow
      do {
        for round in 0..<8 {
          let outcomes = try await h.orders.createBatch(
            [
              .init(userId: "plan-a-\(round)", productId: "gold.100", quantity: 1),
              .init(userId: "plan-b-\(round)", productId: "gold.100", quantity: 2),
            ], ttlSeconds: 3600, maxOpen: 20, on: session)
          #expect(outcomes.allSatisfy { if case .created = $0 { true } else { false } })
        }
        plans = try #require(
          try await session.query(
            """
            SELECT generic_plans, custom_plans FROM pg_prepared_statements
            WHERE statement LIKE '%INSERT INTO orders%' AND statement LIKE '%unnest%'
            """
          ).first)
        await session.shutdown()
      } catch {
        await session.shutdown()
        throw error
      }
      let generic: Int64 = try plans.decode("generic_plans")
      let custom: Int64 = try plans.decode("custom_plans")
      // PostgreSQL tries five custom plans before it weighs the generic one.
      #expect(custom <= 5)
      #expect(generic >= 3)
    }
  }

  @Test func theOpenOrderCapHoldsInsideOneBatch() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      _ = try await h.newOrder(user: "carol")
      let results = await groupCommit(h, maxOpen: 3).flush([
        submission("carol"), submission("dave"), submission("carol"), submission("carol"),
      ])
      _ = try created(results[0])
      _ = try created(results[1])
      _ = try created(results[2])
      #expect(refusal(results[3])?.code == "too_many_open_orders")
      #expect(try await orderCount(h, user: "carol") == 3)
      let slots = try await h.database.query(
        "SELECT open_slot FROM orders WHERE user_id = 'carol' ORDER BY open_slot")
      #expect(try slots.map { try $0.decode("open_slot", as: Int32.self) } == [1, 2, 3])
    }
  }

  @Test func refusalsInABatchAreTheAnswersALoneRequestGets() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      try await h.addConsumable("gold.off")
      try await h.database.execute(
        "UPDATE products SET active = false WHERE product_id = 'gold.off'")
      try await h.database.execute(
        "UPDATE products SET type = 'non_consumable' WHERE product_id = 'gold.100'")
      try await h.addConsumable("gold.500")
      let batch = [
        submission("ann", "nope"), submission("ann", "gold.off"),
        submission("ann", "gold.100", quantity: 2), submission("ann", "gold.500", quantity: 3),
      ]
      let commit = groupCommit(h)
      let together = await commit.flush(batch)
      var alone: [Result<Order, any Error>] = []
      for item in batch {
        do { alone.append(.success(try await commit.commitAlone(item))) } catch {
          alone.append(.failure(error))
        }
      }
      for (a, b) in zip(together.prefix(3), alone.prefix(3)) {
        #expect(refusal(a)?.status == refusal(b)?.status)
        #expect(refusal(a)?.code == refusal(b)?.code)
        #expect(refusal(a)?.detail == refusal(b)?.detail)
      }
      #expect(refusal(together[0])?.code == "product_not_found")
      #expect(refusal(together[1])?.code == "product_inactive")
      #expect(refusal(together[2])?.code == "quantity_not_allowed")
      let batched = try created(together[3])
      let lone = try created(alone[3])
      #expect(batched["quantity"] == .number("3"))
      #expect(batched["amount"] == lone["amount"])
      #expect(Set(batched.keys) == Set(lone.keys))
    }
  }

  @Test func aKeyTakenOverWhileItsFirstRequestRanMakesOneOrder() async throws {
    // The first request's claim goes stale (past 60 s) and a second request takes the key
    // over; the first then writes, in a batch with another user's order and alone: it is
    // refused and leaves nothing, the other order is made, and the key gets the second
    // request's order only.
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let idempotency = IdempotencyStore(database: h.database)
      func claim(_ user: String) async throws -> String {
        guard
          case .claimed(let token) = try await idempotency.claim(
            userId: user, key: "k", fingerprint: "f")
        else { throw IdempotencyKeyTakenOver() }
        return token
      }
      func stale(_ user: String) async throws {
        try await h.database.execute(
          "UPDATE idempotency_keys SET created_at = created_at - interval '61 seconds' WHERE user_id = \(user)"
        )
      }
      for (user, batched) in [("ivy", true), ("jon", false)] {
        let first = try await claim(user)
        try await stale(user)
        let second = try await claim(user)
        #expect(first != second)
        let late = OrderGroupCommit.Submission(
          order: .init(userId: user, productId: "gold.100", quantity: 1), key: "k", token: first)
        let results = await groupCommit(h).flush(batched ? [late, submission("kim")] : [late])
        #expect(throws: IdempotencyKeyTakenOver.self) { try results[0].get() }
        if batched { _ = try created(results[1]) }
        let made = await groupCommit(h).flush([
          .init(
            order: .init(userId: user, productId: "gold.100", quantity: 1), key: "k", token: second)
        ])
        let order = try made[0].get()
        let orders = try await h.database.query(
          "SELECT trade_no FROM orders WHERE user_id = \(user)"
        ).map { try $0.decode("trade_no", as: String.self) }
        #expect(orders == [order.tradeNo], "\(user)")
      }
    }
  }

  @Test func keyedOrdersStoreTheirAnswersInTheBatchTransaction() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let idempotency = IdempotencyStore(database: h.database)
      for (user, key) in [("erin", "k1"), ("frank", "k1")] {
        guard case .claimed = try await idempotency.claim(userId: user, key: key, fingerprint: "f")
        else {
          Issue.record("\(user) could not claim \(key)")
          return
        }
      }
      let results = await groupCommit(h).flush([
        submission("erin", key: "k1"), submission("gus"), submission("frank", key: "k1"),
      ])
      for (index, user) in [(0, "erin"), (2, "frank")] {
        let order = try results[index].get()
        let row = try #require(
          try await h.database.query(
            "SELECT state, response_status, response_body FROM idempotency_keys WHERE user_id = \(user)"
          ).first)
        #expect(try row.decode("state", as: String.self) == "done")
        #expect(try row.decode("response_status", as: Int.self) == 201)
        #expect(try row.decode("response_body", as: [UInt8].self) == order.json)
        guard
          case .replay(let status, let body) = try await idempotency.claim(
            userId: user, key: "k1", fingerprint: "f")
        else {
          Issue.record("\(user)'s key does not replay")
          return
        }
        #expect(status == 201 && body == order.json)
      }
      _ = try created(results[1])
    }
  }

  @Test func concurrentRequestsAreEachAnsweredWithTheirOwnOrder() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let commit = groupCommit(h)
      let users = (0..<120).map { "user\($0)" }
      let answers = try await withThrowingTaskGroup(of: (String, Order).self) { group in
        for user in users {
          group.addTask { (user, try await commit.commit(submission(user))) }
        }
        var answers: [String: Order] = [:]
        for try await (user, response) in group { answers[user] = response }
        return answers
      }
      #expect(answers.count == users.count)
      var tradeNos = Set<String>()
      for (user, response) in answers {
        let order = try created(.success(response))
        #expect(order["user_id"] == .string(user))
        if case .string(let tradeNo) = order["trade_no"] { tradeNos.insert(tradeNo) }
      }
      #expect(tradeNos.count == users.count)
      let stored = try #require(
        try await h.database.query(
          """
          SELECT count(*) AS n FROM orders o
          WHERE EXISTS (SELECT 1 FROM order_events e WHERE e.trade_no = o.trade_no)
          """
        ).first)
      #expect(try stored.decode("n", as: Int.self) == users.count)
    }
  }
}
