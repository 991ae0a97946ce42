import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A proof that does not say whether a transaction is a Family Sharing copy (an app receipt read
/// here) records it as purchased; a later signed proof that says `FAMILY_SHARED` is believed, so
/// the copy stops counting as money.
@Suite(.database) struct FamilySharedProofTests {
  static func familyShared(_ h: DomainHarness, _ transactionId: String) async throws -> Bool? {
    try await h.database.query(
      "SELECT family_shared FROM apple_transactions WHERE transaction_id = \(transactionId)"
    ).first?.decode("family_shared")
  }

  @Test func aLaterProofOfTheUsersOwnTransactionTeachesThatItIsACopy() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct("lifetime", type: .nonConsumable, grants: "{}")
      let order = try await h.newOrder(user: "mia", product: "lifetime")
      var copy = h.transaction(for: order)
      let first = try await h.receipts.apply([copy], userId: "mia", productId: nil)
      #expect(first.transactions.map(\.status) == [.settled])
      #expect(try await Self.familyShared(h, copy.transactionId) == false)
      copy.isFamilyShared = true
      _ = try await h.receipts.apply([copy], userId: "mia", productId: nil)
      #expect(try await Self.familyShared(h, copy.transactionId) == true)
      // A proof that says nothing again does not undo what a signed one said.
      copy.isFamilyShared = false
      _ = try await h.receipts.apply([copy], userId: "mia", productId: nil)
      #expect(try await Self.familyShared(h, copy.transactionId) == true)
    }
  }

  @Test func aTransactionRecordedWithoutAnOwnerLearnsItToo() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct("lifetime", type: .nonConsumable, grants: "{}")
      let order = try await h.newOrder(user: "nia", product: "lifetime")
      var copy = h.transaction(for: order)
      copy.appAccountToken = nil
      _ = try await h.receipts.apply([copy], userId: nil, productId: nil)
      #expect(try await Self.familyShared(h, copy.transactionId) == false)
      copy.isFamilyShared = true
      _ = try await h.receipts.apply([copy], userId: nil, productId: nil)
      #expect(try await Self.familyShared(h, copy.transactionId) == true)
    }
  }
}
