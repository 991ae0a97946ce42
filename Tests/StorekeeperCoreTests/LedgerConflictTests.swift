import AppStore
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A refund's reversal, a credit and a spend of one user running at once: the user's lock is
/// taken before the debt rows everywhere, so they wait for each other instead of deadlocking;
/// and work PostgreSQL does roll back to break a conflict is done again, not lost. Each test
/// makes the other transaction wait for a lock at a chosen point (seen in `pg_locks`), so the
/// interleaving is the same on every run; what they assert is the outcome.
@Suite(.database) struct LedgerConflictTests {
  /// Alice bought 100 gold, spent all of it, and Apple refunded the purchase: it took nothing
  /// back and left 100 owed (`REFUND_POLICY=debt`).
  static func refundedAfterSpending(_ h: DomainHarness) async throws -> (Order, VerifiedTransaction)
  {
    try await h.addConsumable()
    let order = try await h.newOrder()
    let purchase = h.transaction(for: order)
    _ = try await h.settlement.settle(
      order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
      cause: .report)
    _ = try await WalletService(database: h.database, outbox: h.orders.outbox).apply(
      request(.spend, 100, key: "spend-all"))
    #expect(
      try await h.apply(DomainHarness.notification("REFUND", transaction: purchase))
        == .processed(.refunded))
    #expect(try await outstanding(h) == 100)
    return (order, purchase)
  }

  static func request(_ kind: WalletRequest.Kind, _ amount: Int64, key: String) -> WalletRequest {
    WalletRequest(
      kind: kind, userId: "alice", asset: "gold", amount: amount, reason: "test", reference: nil,
      environment: nil, idempotencyKey: key, caller: "anyone", requestId: "r")
  }

  static func outstanding(_ h: DomainHarness) async throws -> Int64 {
    try await h.database.query(
      "SELECT coalesce(sum(outstanding), 0)::bigint AS owed FROM ledger_debts"
    ).first?.decode("owed") ?? -1
  }

  /// Waits until another session of this database waits for a lock.
  static func someoneWaitsForALock(_ h: DomainHarness) async throws {
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
    Issue.record("no session ever waited for a lock")
  }

  /// Runs `first` in a transaction, then `start` (the work under test, in a task of its own),
  /// waits until that work waits for a lock, and runs `then` in the same transaction: the
  /// other half of a lock-order conflict. This transaction breaks no deadlock itself (its
  /// `deadlock_timeout` is long), so when there is one the work under test is its victim.
  static func interleave<T: Sendable>(
    _ h: DomainHarness, first: @escaping @Sendable (PostgresTransaction) async throws -> Void,
    start: @escaping @Sendable () async throws -> T,
    then: @escaping @Sendable (PostgresTransaction) async throws -> Void
  ) async throws -> T {
    let (holding, holds) = AsyncStream<Void>.makeStream()
    let holder = Task {
      try await h.database.withTransaction { tx in
        try await tx.execute("SET LOCAL deadlock_timeout = '30s'")
        try await first(tx)
        holds.yield()
        try await someoneWaitsForALock(h)
        try await then(tx)
      }
    }
    for await _ in holding { break }
    let work = Task { try await start() }
    try await holder.value
    return try await work.value
  }

  @Test func aReversalRacingACreditWaitsForTheUserInsteadOfDeadlocking() async throws {
    try await DomainHarness.with { h in
      let (order, purchase) = try await Self.refundedAfterSpending(h)
      let reversal = try DomainHarness.notification("REFUND_REVERSED", transaction: purchase)
      // A credit holds alice's lock; the reversal comes and waits for it (before the fix it
      // held the refund's debt row by then); the credit then repays debts, which locks them.
      let outcome = try await Self.interleave(
        h, first: { tx in try await h.orders.outbox.lock(["alice"], on: tx) },
        start: { try await h.apply(reversal) },
        then: { tx in
          try await tx.execute(
            """
            INSERT INTO ledger (user_id, asset, amount, kind, environment)
            VALUES ('alice', 'gold', 10, 'reward', 'Production')
            """)
        })
      #expect(outcome == .processed(.refundReversed))
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .tradeSuccess)
      #expect(try await Self.outstanding(h) == 0)
      // The credit's 10 repaid part of the debt; the reversal cancelled the rest and gave the
      // repaid 10 back.
      #expect(try await h.gold("alice") == 10)
    }
  }

  @Test func aNotificationThatLosesADeadlockStaysPendingAndIsAppliedOnTheNextPass() async throws {
    try await DomainHarness.with { h in
      let (order, purchase) = try await Self.refundedAfterSpending(h)
      var configuration = AppStoreConfiguration(bundleId: DomainHarness.bundleId)
      configuration.extraRootCertificatesPEM = [h.authority.rootCertificatePEM]
      let service = NotificationService(
        database: h.database, verifier: try SignedDataVerifier(configuration: configuration),
        settlement: h.settlement, catalog: h.catalog, clock: h.clock.clock,
        logger: DomainHarness.logger)
      let reversal = try DomainHarness.notification("REFUND_REVERSED", transaction: purchase)
      try await h.database.execute(
        """
        INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state)
        VALUES ('reversal', 'REFUND_REVERSED', \(try JSONCoding.text(reversal))::jsonb, 'pending')
        """)
      let state = {
        try await h.database.query(
          "SELECT state FROM apple_notifications WHERE notification_uuid = 'reversal'"
        ).first?.decode("state", as: String.self)
      }
      // The reversal holds the order and waits for alice's lock; this transaction holds that
      // lock and asks for the order: a deadlock, which PostgreSQL breaks by failing the
      // reversal.
      try await Self.interleave(
        h, first: { tx in try await h.orders.outbox.lock(["alice"], on: tx) },
        start: { await service.processPending() },
        then: { tx in
          try await tx.execute("SELECT 1 FROM orders WHERE trade_no = \(order.tradeNo) FOR UPDATE")
        })
      #expect(try await state() == "pending")
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .tradeClosed)

      await service.processPending()
      #expect(try await state() == "processed")
      #expect(try await h.orders.find(order.tradeNo)?.tradeStatus == .tradeSuccess)
      #expect(try await Self.outstanding(h) == 0)
    }
  }

  @Test func aGrantThatLosesADeadlockIsMadeOnItsSecondTry() async throws {
    try await DomainHarness.with { h in
      _ = try await Self.refundedAfterSpending(h)
      let wallet = WalletService(database: h.database, outbox: h.orders.outbox)
      // The grant holds alice's lock and waits for her debt row, which this transaction holds
      // and then asks for alice's lock.
      let outcome = try await Self.interleave(
        h,
        first: { tx in
          try await tx.execute("SELECT 1 FROM ledger_debts WHERE user_id = 'alice' FOR UPDATE")
        },
        start: { try await wallet.apply(Self.request(.grant, 30, key: "reward")) },
        then: { tx in try await h.orders.outbox.lock(["alice"], on: tx) })
      #expect(outcome.created)
      // The 30 went to the debt.
      #expect(outcome.operation.balanceAfter == 0)
      #expect(try await Self.outstanding(h) == 70)
    }
  }
}
