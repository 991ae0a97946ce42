import AppStore

/// Picks, from the transactions a proof holds, the one that pays a given order — or says
/// precisely why none does. Pure: what is already used elsewhere is passed in.
enum TransactionMatcher {
  /// `usedElsewhere` are transaction ids already settling other orders; `avoid`, ones that
  /// may pay it only if nothing else does (refunded, as the caller then says).
  static func match(
    _ order: Order, in transactions: [VerifiedTransaction], usedElsewhere: Set<String>,
    avoid: Set<String> = []
  ) throws(SettlementRefusal) -> VerifiedTransaction {
    if let exact = transactions.first(where: { $0.transactionId == order.transactionId }) {
      return exact
    }
    let forProduct = transactions.filter { $0.productId == order.productId }
    let sameProduct = forProduct.filter { $0.revocationDate == nil }
    if sameProduct.isEmpty && !forProduct.isEmpty {
      throw .transactionRevoked(productId: order.productId)
    }
    guard !sameProduct.isEmpty else {
      throw .productMismatch(
        paidFor: Set(transactions.map(\.productId)).sorted(), ordered: order.productId)
    }
    let token = order.appAccountToken.lowercased()
    if let byToken = sameProduct.first(where: { $0.appAccountToken?.lowercased() == token }) {
      return try checked(byToken, order)
    }
    let unbound = sameProduct.filter { $0.appAccountToken == nil }
    guard !unbound.isEmpty else { throw .accountTokenMismatch }
    // The newest free purchase of the order's quantity that is not to be avoided; a proof may
    // hold several (two orders bought before either was reported, without tokens), and one that
    // cannot pay this order must not hide one that can.
    func rank(_ transaction: VerifiedTransaction) -> Int {
      (transaction.quantity == Int(order.quantity) ? 2 : 0)
        + (avoid.contains(transaction.transactionId) ? 0 : 1)
    }
    let free = unbound.filter { !usedElsewhere.contains($0.transactionId) }.sorted {
      rank($0) != rank($1) ? rank($0) > rank($1) : $0.purchaseDate > $1.purchaseDate
    }
    guard let best = free.first else {
      throw .transactionAlreadyUsed(transactionId: nil, productId: order.productId)
    }
    return try checked(best, order)
  }

  /// Whether `order` is the one the app made for `period`, a period of its user's own
  /// subscription that carries no token of the order's (the token of the order that began the
  /// subscription, which Apple's later periods keep): unpaid, for the period's product and
  /// quantity, and made before the period was bought, as a tokenless period's order must be
  /// (`SettlementService.appOrder`). An order made after it (an app reporting
  /// `Transaction.updates` on a fresh order) did not buy it.
  static func ordered(_ period: VerifiedTransaction, with order: Order) -> Bool {
    guard order.tradeStatus != .tradeSuccess, order.transactionId == nil,
      order.productId == period.productId, Int(order.quantity) == period.quantity,
      period.revocationDate == nil,
      let madeAt = Timestamp.parseMillisecond(order.createdAt)
    else { return false }
    return madeAt <= period.purchaseDate
  }

  private static func checked(_ transaction: VerifiedTransaction, _ order: Order)
    throws(SettlementRefusal) -> VerifiedTransaction
  {
    guard transaction.quantity == Int(order.quantity) else {
      throw .quantityMismatch(charged: transaction.quantity, ordered: order.quantity)
    }
    return transaction
  }
}
