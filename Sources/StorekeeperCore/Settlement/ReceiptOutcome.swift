/// What `POST /v1/receipts` did with each transaction in the proof.
package struct ReceiptOutcome: Encodable, Sendable {
  package struct Item: Encodable, Sendable {
    package var transactionId: String
    package var originalTransactionId: String
    package var productId: String
    package var status: Status
    /// The order it paid, when that order is the caller's.
    package var tradeNo: String?
    /// Why it was refused, for `refused`.
    package var code: String?
    /// This request recorded it first, without an owner: for a post naming no user, whose app
    /// grants from the content itself, that is what `newly_granted` says. Not in the answer.
    var firstRecorded = false

    enum CodingKeys: String, CodingKey {
      case transactionId = "transaction_id"
      case originalTransactionId = "original_transaction_id"
      case productId = "product_id"
      case status, code
      case tradeNo = "trade_no"
    }
  }

  /// What happened to one transaction.
  package enum Status: String, Encodable, Sendable, Hashable {
    /// Credited now.
    case settled
    /// Already this user's.
    case restored
    /// Kept without an owner (no user was named).
    case recorded
    /// Another user's purchase (or one only an admin may give an owner); who owns it is not said.
    case notYours = "not_yours"
    /// Genuine, but it cannot pay the order it names (`code` says why).
    case refused
    case revoked
    case unknownProduct = "unknown_product"

    /// The purchase is the caller's to use: its content is delivered.
    var delivers: Bool { self == .settled || self == .restored || self == .recorded }
  }

  package var transactions: [Item]
  var entitlements: Entitlements?
  package var delivery: [Delivery]
}
