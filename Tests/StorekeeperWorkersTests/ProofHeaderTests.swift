import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A signed transaction's JOSE header stored once (0085): what the retry worker reads back is
/// always the text the client sent.
@Suite(.database) struct ProofHeaderTests {
  static func text(_ h: DomainHarness, _ proof: Proof) async throws -> String? {
    let row = try #require(
      try await h.database.query(
        """
        SELECT \(unescaped: ReportStore.storedText) AS text
        FROM (SELECT \(proof.hash)::text AS proof_hash) r
        """
      ).first)
    return try row.decodeIfPresent("text")
  }

  static func count(_ h: DomainHarness, _ query: PostgresQuery) async throws -> Int64 {
    try #require(try await h.database.query(query).first).decode("n")
  }

  @Test func onlyAHeaderFollowedByTwoMorePartsIsShared() throws {
    let shared = try #require(Proof.signedTransaction("aGVhZA.cGF5.c2ln").sharedHeader)
    #expect(shared.header == "aGVhZA")
    #expect(shared.rest == "cGF5.c2ln")
    #expect(Proof.signedTransaction("é.p.s").sharedHeader?.rest == "p.s")
    for text in ["", "abc", ".payload.signature", "header.payload", "header."] {
      #expect(Proof.signedTransaction(text).sharedHeader == nil, "\(text)")
    }
  }

  @Test func settledSignedTransactionsShareOneStoredHeader() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      var proofs: [Proof] = []
      for user in ["alice", "bob"] {
        let order = try await h.newOrder(user: user)
        let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
        let result = try await h.processor.process(
          .paid(tradeNo: order.tradeNo, proof: proof), logger: DomainHarness.logger)
        guard case .settled = result else {
          Issue.record("expected settled, got \(result)")
          return
        }
        proofs.append(proof)
      }
      let shared = try #require(proofs[0].sharedHeader)
      #expect(proofs[1].sharedHeader?.hash == shared.hash)
      #expect(try await Self.count(h, "SELECT count(*) AS n FROM proof_headers") == 1)
      for proof in proofs {
        let rest = try #require(proof.sharedHeader?.rest)
        #expect(
          try await Self.count(
            h,
            """
            SELECT count(*) AS n FROM proofs
            WHERE hash = \(proof.hash) AND header_hash = \(shared.hash) AND body = \(rest)
            """) == 1)
        #expect(try await Self.text(h, proof) == proof.text)
      }
    }
  }

  @Test func aPendingReportsProofIsKeptWholeAndOneStoredSplitIsMadeWholeAgain() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder()
      let proof = Proof.signedTransaction(try h.signed(h.transaction(for: order)))
      _ = try await h.processor.process(
        .paid(tradeNo: order.tradeNo, proof: proof), logger: DomainHarness.logger)
      #expect(
        try await Self.count(
          h,
          "SELECT count(*) AS n FROM proofs WHERE hash = \(proof.hash) AND header_hash IS NOT NULL")
          == 1)

      // The same transaction posted again and left waiting (as /v1/receipts does when Apple
      // cannot judge yet): the retry worker, of this release or the one before, reads it.
      let id = try await h.reports.insertPending(
        tradeNo: nil, userId: "alice", productId: order.productId, proof: proof)
      #expect(
        try await Self.count(
          h,
          """
          SELECT count(*) AS n FROM proofs
          WHERE hash = \(proof.hash) AND header_hash IS NULL AND body = \(proof.text)
          """) == 1)
      h.clock.advance(by: 3_600)
      let due = try await h.reports.claimDue(limit: 10)
      #expect(due.map(\.id) == [id])
      #expect(due.first?.proof == proof)

      let other = try await h.newOrder(user: "bob")
      let fresh = Proof.signedTransaction(try h.signed(h.transaction(for: other)))
      _ = try await h.reports.insertPending(
        tradeNo: other.tradeNo, userId: "bob", productId: other.productId, proof: fresh)
      #expect(
        try await Self.count(
          h,
          """
          SELECT count(*) AS n FROM proofs
          WHERE hash = \(fresh.hash) AND header_hash IS NULL AND body = \(fresh.text)
          """) == 1)
    }
  }
}
