import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Set App Account Token calls owed to Apple (`app_account_token_jobs`), on a real database:
/// queued by the settlement that gives a token-less purchase to an order, once; claimed with a
/// lease; a result recorded only against the claim it came from; a 429's instant kept.
@Suite(.database) struct AccountTokenJobTests {
  static func binding(_ h: DomainHarness) -> ReceiptService {
    var settlement = h.settlement
    settlement.bindsAccountTokens = true
    return ReceiptService(
      orders: h.orders, reports: h.reports, verifier: h.processor.verifier,
      settlement: settlement, catalog: h.catalog, entitlements: h.entitlements)
  }

  /// A purchase made outside the app: no token.
  static func offerCode(_ id: String = UUID().uuidString) -> VerifiedTransaction {
    VerifiedTransaction(
      transactionId: id, originalTransactionId: id, bundleId: DomainHarness.bundleId,
      productId: "gold.100", quantity: 1,
      purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), environment: "Sandbox",
      type: "Consumable")
  }

  static func jobs(_ h: DomainHarness) async throws -> [[String]] {
    try await h.database.query(
      """
      SELECT original_transaction_id, environment, app_account_token::text AS token, trade_no,
        state FROM app_account_token_jobs ORDER BY queued_at, original_transaction_id
      """
    ).map { row in
      [
        try row.decode("original_transaction_id"), try row.decode("environment"),
        try row.decode("token"), try row.decode("trade_no"), try row.decode("state"),
      ]
    }
  }

  @Test func aTokenlessPurchaseGivenToAnOrderQueuesOneCallWithThatOrdersToken() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let receipts = Self.binding(h)
      let purchase = Self.offerCode()
      let first = try await receipts.apply([purchase], userId: "alice", productId: nil)
      let tradeNo = try #require(first.transactions.first?.tradeNo)
      let order = try #require(try await h.orders.find(tradeNo))
      #expect(
        try await Self.jobs(h) == [
          [
            purchase.transactionId, "Sandbox", order.appAccountToken.lowercased(), tradeNo,
            "pending",
          ]
        ])
      // Restored again: nothing more is owed.
      _ = try await receipts.apply([purchase], userId: "alice", productId: nil)
      #expect(try await Self.jobs(h).count == 1)
      // A purchase made for an order carries its token already.
      let ordered = try await h.newOrder(user: "bob")
      _ = try await receipts.apply([h.transaction(for: ordered)], userId: "bob", productId: nil)
      #expect(try await Self.jobs(h).count == 1)
      // Without the key (the default), nothing is queued.
      _ = try await h.receipts.apply([Self.offerCode()], userId: "carol", productId: nil)
      #expect(try await Self.jobs(h).count == 1)
    }
  }

  @Test func aResultCountsOnlyForTheClaimItCameFrom() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let purchase = Self.offerCode()
      _ = try await Self.binding(h).apply([purchase], userId: "alice", productId: nil)
      let jobs = AccountTokenJobs(
        database: h.database, policy: RetryPolicy(baseMs: 1000, windowMs: 3_600_000))
      let claimed = try await jobs.claim(limit: 10)
      #expect(claimed.map(\.originalTransactionId) == [purchase.transactionId])
      #expect(claimed.first?.attempt == 1)
      // Leased: another instance finds nothing due.
      #expect(try await jobs.claim(limit: 10).isEmpty)
      // An admin gives the purchase to bob meanwhile: alice's token must not be the last word.
      let bobs = try await h.newOrder(user: "bob")
      try await h.database.withTransaction { tx in
        try await AccountTokenJobs.reassign(
          originalTransactionId: purchase.transactionId, environment: "Sandbox", order: bobs,
          on: tx)
      }
      try await jobs.record(try #require(claimed.first), .sent)
      #expect(try await Self.jobs(h).first?[2] == bobs.appAccountToken.lowercased())
      #expect(try await Self.jobs(h).first?[4] == "pending")
      let again = try #require(try await jobs.claim(limit: 10).first)
      #expect(again.token == bobs.appAccountToken.lowercased() && again.attempt == 1)
      try await jobs.record(again, .sent)
      #expect(try await Self.jobs(h).first?[4] == "sent")
    }
  }

  @Test func aRateLimitedJobWaitsForApplesInstantAndARefusalEndsIt() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let receipts = Self.binding(h)
      let limited = Self.offerCode()
      let refused = Self.offerCode()
      _ = try await receipts.apply([limited], userId: "alice", productId: nil)
      _ = try await receipts.apply([refused], userId: "bob", productId: nil)
      let jobs = AccountTokenJobs(
        database: h.database, policy: RetryPolicy(baseMs: 1000, windowMs: 3_600_000))
      let claimed = try await jobs.claim(limit: 10)
      #expect(claimed.count == 2)
      for job in claimed {
        if job.originalTransactionId == limited.transactionId {
          // Apple's instant is an hour ahead of the policy's one second.
          try await jobs.record(job, .retry("rate limited", notBeforeMs: job.nowMs + 3_600_000))
        } else {
          try await jobs.record(job, .refused("answered 404: 4040010"))
        }
      }
      let rows = try await h.database.query(
        """
        SELECT original_transaction_id, state, last_error,
          next_attempt_at >= now() + interval '59 minutes' AS waits
        FROM app_account_token_jobs ORDER BY original_transaction_id
        """)
      let states = try rows.map {
        (
          try $0.decode("original_transaction_id", as: String.self),
          try $0.decode("state", as: String.self), try $0.decode("waits", as: Bool.self)
        )
      }
      #expect(states.contains { $0 == (limited.transactionId, "pending", true) })
      #expect(states.contains { $0.0 == refused.transactionId && $0.1 == "failed" })
      #expect(try await jobs.claim(limit: 10).isEmpty)
    }
  }
}
