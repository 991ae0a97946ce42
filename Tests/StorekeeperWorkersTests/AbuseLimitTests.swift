import Foundation
import Postgres
import StorekeeperTestSupport
import Synchronization
import Testing

@testable import FakeAppStore
@testable import StorekeeperCore
@testable import StorekeeperWorkers

/// The limits that live in the database: open orders per user, proofs stored once, proofs purged.
@Suite(.database) struct AbuseLimitTests {
  static func count(_ h: DomainHarness, _ sql: String) async throws -> Int {
    let row = try #require(try await h.database.query(PostgresQuery(unsafeSQL: sql)).first)
    let n: Int64 = try row.decode("n")
    return Int(n)
  }

  func create(_ h: DomainHarness, _ user: String, maxOpen: Int) async throws
    -> OrderRepository.CreateOutcome
  {
    try await h.orders.create(
      userId: user, productId: "gold.100", quantity: 1, ttlSeconds: 3600, maxOpen: maxOpen,
      on: h.database)
  }

  @Test func aUserHoldsAtMostTheCapOfUnpaidOrders() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var created: [Order] = []
      for _ in 0..<3 {
        guard case .created(let order) = try await create(h, "alice", maxOpen: 3) else {
          Issue.record("expected an order")
          return
        }
        created.append(order)
      }
      guard case .tooManyOpenOrders = try await create(h, "alice", maxOpen: 3) else {
        Issue.record("a fourth open order was created")
        return
      }
      guard case .created = try await create(h, "bob", maxOpen: 3) else {
        Issue.record("another user is not limited by alice's orders")
        return
      }
      // Closing one frees its slot.
      _ = try await h.processor.process(
        .closed(tradeNo: created[0].tradeNo, reason: .cancelled), logger: DomainHarness.logger)
      guard case .created = try await create(h, "alice", maxOpen: 3) else {
        Issue.record("a closed order still counted")
        return
      }
    }
  }

  @Test func racingCreationsNeverPassTheCap() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<12 {
          group.addTask {
            if case .created = try await create(h, "carol", maxOpen: 4) { return true }
            return false
          }
        }
        return try await group.reduce(into: [Bool]()) { $0.append($1) }
      }
      #expect(outcomes.filter { $0 }.count == 4)
      #expect(
        try await Self.count(
          h,
          "SELECT count(*) AS n FROM orders WHERE user_id = 'carol' AND trade_status = 'WAIT_BUYER_PAY'"
        ) == 4)
    }
  }

  @Test func twoReportsWithOneProofStoreItOnce() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let receipt = Proof.receipt(String(repeating: "QUJD", count: 4096))
      // Apple is away in the harness: both reports wait, stored, on one proof.
      for _ in 0..<2 {
        let result = try await h.processor.process(
          .paid(tradeNo: order.tradeNo, proof: receipt), logger: DomainHarness.logger)
        guard case .pending = result else {
          Issue.record("expected pending, got \(result)")
          return
        }
      }
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM trade_reports") == 2)
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proofs") == 1)
      let due = try await h.reports.claimDue(limit: 10)
      #expect(due.isEmpty || due.allSatisfy { $0.proof == receipt })
    }
  }

  @Test func settledProofsArePurgedAfterRetentionPendingOnesNever() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let paid = try await h.newOrder(user: "dave")
      let signed = Proof.signedTransaction(try h.signed(h.transaction(for: paid)))
      _ = try await h.processor.process(
        .paid(tradeNo: paid.tradeNo, proof: signed), logger: DomainHarness.logger)
      let waiting = try await h.newOrder(user: "erin")
      _ = try await h.processor.process(
        .paid(tradeNo: waiting.tradeNo, proof: .receipt("d2FpdGluZw==")),
        logger: DomainHarness.logger)
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proofs") == 2)

      #expect(try await h.reports.purgeProofs() == 0)
      h.clock.advance(by: 29 * 86_400)
      #expect(try await h.reports.purgeProofs() == 0)
      h.clock.advance(by: 2 * 86_400)
      #expect(try await h.reports.purgeProofs() == 1)
      #expect(
        try await Self.count(h, "SELECT count(*) AS n FROM proofs WHERE kind = 'receipt'") == 1)

      // The hash outlives the text: a repeat of the settled report is still recognised.
      let context = try #require(try await h.orders.reportContext(paid.tradeNo, proof: signed))
      #expect(context.proofSettled)
    }
  }

  @Test func aRefusedProofLeavesItsHashAndSizeNotItsBytes() async throws {
    // verifyReceipt refuses whatever it is sent (21010: not authorised).
    try await DomainHarness.with(apple: SwitchableAppleTransport(["status": 21010])) { h in
      try await h.addConsumable()
      // An app receipt signed by an authority nobody trusts: refused before it is stored.
      let payload = FakeDER.set([FakeDER.attribute(2, FakeDER.utf8String(DomainHarness.bundleId))])
      let unsigned = Proof.receipt(
        Data(try FakeCertificateAuthority().signPKCS7(payload)).base64EncodedString())
      let order = try await h.newOrder(user: "frank")
      await #expect(throws: SettlementRefusal.self) {
        try await h.processor.process(
          .paid(tradeNo: order.tradeNo, proof: unsigned), logger: DomainHarness.logger)
      }
      // What verifyReceipt refused after it was stored pending: gone on the next sweep.
      let refused = Proof.receipt("cmVmdXNlZCBieSBBcHBsZQ==")
      await #expect(throws: SettlementRefusal.self) {
        try await h.processor.process(
          .paid(tradeNo: order.tradeNo, proof: refused), logger: DomainHarness.logger)
      }
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proofs") == 1)
      #expect(try await h.reports.purgeProofs() == 0)
      h.clock.advance(by: 61)
      #expect(try await h.reports.purgeProofs() == 1)
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proofs") == 0)
      // Both reports keep what identifies and measures their proof.
      let kept = try await h.database.query(
        "SELECT proof_hash, proof_size FROM trade_reports ORDER BY id")
      #expect(
        try kept.map { try $0.decode("proof_hash") as String } == [unsigned.hash, refused.hash])
      #expect(
        try kept.map { try $0.decode("proof_size") as Int32 } == [unsigned.size, refused.size])
    }
  }

  @Test func aSignedTransactionRefusedOfflineOnTheReceiptsRouteKeepsNoText() async throws {
    try await DomainHarness.with { h in
      // Junk where a JWS goes: refused by its signature check, before anything is stored.
      let junk = Proof.signedTransaction(
        "eyJhbGciOiJFUzI1NiJ9." + String(repeating: "A", count: 60_000) + ".c2ln")
      await #expect(throws: SettlementRefusal.self) {
        try await h.receipts.submit(
          .init(userId: "grace", proof: junk), logger: DomainHarness.logger)
      }
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proofs") == 0)
      let kept = try await h.database.query(
        "SELECT proof_hash, proof_size, outcome FROM trade_reports")
      #expect(try kept.map { try $0.decode("proof_hash") as String } == [junk.hash])
      #expect(try kept.map { try $0.decode("proof_size") as Int32 } == [junk.size])
      #expect(try kept.map { try $0.decode("outcome") as String } == ["invalid"])
    }
  }

  @Test func aReportPastTheSignatureQueueIsRefusedBeforeAnythingIsStored() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      var processor = h.processor
      processor.gate = VerificationGate(cpu: 1, apple: 1, google: 1, queueLength: 0)
      #expect(processor.gate.tryEnter(.cpu))
      await #expect(throws: VerificationBusy(lane: .cpu)) {
        try await processor.process(
          .paid(tradeNo: order.tradeNo, proof: .receipt("YnVzeQ==")), logger: DomainHarness.logger)
      }
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM trade_reports") == 0)
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proofs") == 0)
    }
  }

  @Test func aReceiptPastApplesCallCapIsStoredAndPendingForTheRetryWorker() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      var processor = h.processor
      processor.gate = VerificationGate(cpu: 1, apple: 1, google: 1)
      #expect(processor.gate.tryEnter(.apple))
      let result = try await processor.process(
        .paid(tradeNo: order.tradeNo, proof: .receipt("YnVzeQ==")), logger: DomainHarness.logger)
      guard case .pending = result else {
        Issue.record("expected pending, got \(result)")
        return
      }
      // Due at the worker's next pass, not after the retry policy's first delay.
      #expect(
        try await Self.count(
          h,
          """
          SELECT count(*) AS n FROM trade_reports WHERE outcome = 'pending'
            AND last_error = 'apple_busy' AND next_attempt_at <= now()
          """) == 1)
      #expect(processor.gate.inUse(.apple) == 1 && processor.gate.inUse(.cpu) == 0)
    }
  }

  @Test func theRetryWorkerWaitsForAVerificationSlot() async throws {
    try await DomainHarness.with(policy: RetryPolicy(baseMs: 1_000, windowMs: 3_600_000)) { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let result = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: .receipt("d29ya2Vy")), logger: DomainHarness.logger)
      guard case .pending = result else {
        Issue.record("expected pending, got \(result)")
        return
      }
      var processor = h.processor
      processor.gate = VerificationGate(cpu: 1, apple: 1, google: 1)
      let gate = processor.gate
      let worker = ReportRetryWorker(
        reports: h.reports, orders: h.orders, processor: processor, receipts: h.receipts,
        logger: DomainHarness.logger)
      #expect(gate.tryEnter(.apple))
      h.clock.advance(by: 2)
      let finished = Mutex(false)
      let pass = Task {
        await worker.runOnce()
        finished.withLock { $0 = true }
      }
      // The report is claimed, but its verification waits while the only slot is held. Wait
      // for the claim however long a loaded machine takes to run the pass that far, then give
      // the pass as long as before to (wrongly) get past the held slot.
      let claimDeadline = ContinuousClock.now + .seconds(30)
      while ContinuousClock.now < claimDeadline, !finished.withLock({ $0 }) {
        if try await Self.count(h, "SELECT count(*) AS n FROM trade_reports WHERE attempts = 2")
          == 1
        {
          break
        }
        try await Task.sleep(for: .milliseconds(20))
      }
      try await Task.sleep(for: .milliseconds(500))
      #expect(!finished.withLock { $0 })
      #expect(
        try await Self.count(h, "SELECT count(*) AS n FROM trade_reports WHERE attempts = 2") == 1)
      gate.leave(.apple)
      await pass.value
      #expect(finished.withLock { $0 })
      #expect(gate.inUse(.apple) == 0)
    }
  }
}
