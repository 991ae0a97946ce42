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
    // Newest first, by the purchase date the receipt signs (Apple's RFC 3339 spelling sorts
    // as text), undated ones last, as the history is read: what the limit leaves out is old.
    let dates = Dictionary(
      contents.purchases.map { ($0.transactionId, $0.purchaseDate ?? "") },
      uniquingKeysWith: { first, _ in first })
    order = contents.transactionIds.reversed().enumerated().sorted {
      (dates[$0.element] ?? "", -$0.offset) > (dates[$1.element] ?? "", -$1.offset)
    }.map(\.element)
  }

  /// History pages may use half the calls; the other half is kept for the lookups the
  /// history leaves.
  var mayReadHistory: Bool { calls < limit - limit / 2 }
  var mayLookUp: Bool { calls < limit }

  /// Listed transactions no answer has brought yet, newest first. A StoreKit 1 restore whose
  /// one-time purchase the answers brought is answered: the Server API knows a restored
  /// purchase only by its original transaction, and has nothing to say of the restore's id.
  var missing: [String] { order.filter { found[$0] == nil && !answeredByPurchase($0) } }

  private func answeredByPurchase(_ id: String) -> Bool {
    guard let purchase = listed[id], purchase.originalTransactionId != id,
      let original = found[purchase.originalTransactionId],
      let type = original.type.flatMap(TransactionType.init(rawValue:))
    else { return false }
    return type == .nonConsumable || type == .nonRenewingSubscription
  }

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
