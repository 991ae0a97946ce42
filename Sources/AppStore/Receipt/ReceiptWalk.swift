/// One receipt's questions to Apple: the calls spent against its limit, and which of Apple's
/// signed answers the signed receipt lets pay.
struct ReceiptWalk {
  let limit: Int
  private(set) var calls = 0
  private(set) var found: [String: VerifiedTransaction] = [:]
  /// What the receipt says of each transaction it lists.
  private let listed: [String: AppReceiptPurchase]
  private let originals: Set<String>
  private let order: [String]

  init(contents: AppReceiptContents, limit: Int) {
    self.limit = limit
    var listed: [String: AppReceiptPurchase] = [:]
    for purchase in contents.purchases where listed[purchase.transactionId] == nil {
      listed[purchase.transactionId] = purchase
    }
    self.listed = listed
    originals = Set(contents.purchases.map(\.originalTransactionId))
    order = contents.transactionIds
  }

  /// History pages may use half the calls; the other half is kept for the lookups the
  /// history leaves.
  var mayReadHistory: Bool { calls < limit - limit / 2 }
  var mayLookUp: Bool { calls < limit }

  /// Listed transactions no answer has brought yet, in receipt order.
  var missing: [String] { order.filter { found[$0] == nil } }

  mutating func spend(_ metrics: ServerAPIReceiptMetrics) {
    calls += 1
    metrics.called()
  }

  /// Keeps `transaction` when the receipt lists it or its subscription; a refusal when Apple's
  /// answer contradicts what the signed receipt says of it.
  mutating func keep(_ transaction: VerifiedTransaction) -> VerificationResult<VerifiedReceipt>? {
    if let purchase = listed[transaction.transactionId] {
      guard purchase.originalTransactionId == transaction.originalTransactionId,
        purchase.productId.map({ $0 == transaction.productId }) ?? true
      else { return .invalid("server_api_receipt_mismatch") }
      found[transaction.transactionId] = transaction
    } else if originals.contains(transaction.originalTransactionId) {
      found[transaction.transactionId] = transaction
    }
    return nil
  }
}
