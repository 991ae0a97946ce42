/// What `POST /v1/receipts` did with each transaction in the proof.
struct ReceiptOutcome: Encodable, Sendable {
  struct Item: Encodable, Sendable {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    /// `settled` (credited now), `restored` (already this user's), `recorded` (kept without an
    /// owner), `owned_by_another_user`, `revoked`, `unknown_product`.
    var status: String
    var tradeNo: String?

    enum CodingKeys: String, CodingKey {
      case transactionId = "transaction_id"
      case originalTransactionId = "original_transaction_id"
      case productId = "product_id"
      case status
      case tradeNo = "trade_no"
    }
  }

  var transactions: [Item]
  var entitlements: Entitlements?
  var delivery: [Delivery]
}
