import Testing

@testable import StorekeeperCore

/// A refusal is read by whoever supports the purchase, Android's as well as Apple's: its
/// detail names no store it cannot know (the machine `code` is what a client branches on).
@Suite struct SettlementRefusalWordingTests {
  static let shared: [SettlementRefusal] = [
    .quantityMismatch(charged: 3, ordered: 1),
    .transactionAlreadyUsed(transactionId: "GPA.3300-0000-0000-00001", productId: "gold"),
    .transactionAlreadyUsed(transactionId: nil, productId: "gold"),
    .accountTokenMismatch,
    .transactionRevoked(productId: "gold"),
    .invalidProof(reason: "google_refused: bad token", field: "purchase_token"),
  ]

  @Test(arguments: shared) func namesNoStore(_ refusal: SettlementRefusal) {
    #expect(!refusal.detail.contains("Apple"), "\(refusal.detail)")
  }

  @Test func codesAreUnchanged() {
    #expect(
      Self.shared.map(\.code) == [
        "quantity_mismatch", "transaction_already_used", "transaction_already_used",
        "account_token_mismatch", "transaction_revoked", "invalid_proof",
      ])
  }

  @Test func theAccountIdIsNamedForBothStores() {
    let detail = SettlementRefusal.accountTokenMismatch.detail
    #expect(detail.contains("app_account_token") && detail.contains("obfuscated account id"))
  }
}
