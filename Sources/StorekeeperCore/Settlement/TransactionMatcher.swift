import AppStore

/// Picks, from the transactions a proof holds, the one that pays a given order — or says
/// precisely why none does. Pure: what is already used elsewhere is passed in.
enum TransactionMatcher {
  /// `usedElsewhere` are transaction ids already settling other orders.
  static func match(
    _ order: Order, in transactions: [VerifiedTransaction], usedElsewhere: Set<String>
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
    guard
      let free = unbound.sorted(by: { $0.purchaseDate > $1.purchaseDate })
        .first(where: { !usedElsewhere.contains($0.transactionId) })
    else { throw .transactionAlreadyUsed(transactionId: nil, productId: order.productId) }
    return try checked(free, order)
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
