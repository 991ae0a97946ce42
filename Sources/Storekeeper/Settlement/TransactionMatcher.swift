import AppStore
import HTTP

/// Picks, from the transactions a proof holds, the one that pays a given order — or says
/// precisely why none does.
enum TransactionMatcher {
  /// `usedElsewhere` are transaction ids already settling other orders.
  static func match(
    _ order: Order, in transactions: [VerifiedTransaction], usedElsewhere: Set<String>
  ) throws -> VerifiedTransaction {
    if let exact = transactions.first(where: { $0.transactionId == order.transactionId }) {
      return exact
    }
    let forProduct = transactions.filter { $0.productId == order.productId }
    let sameProduct = forProduct.filter { $0.revocationDate == nil }
    if sameProduct.isEmpty && !forProduct.isEmpty {
      throw HTTPError(
        422, code: "transaction_revoked",
        detail: "Apple refunded or revoked the transaction for \(order.productId)")
    }
    guard !sameProduct.isEmpty else {
      let products = Set(transactions.map(\.productId)).sorted().joined(separator: ", ")
      throw HTTPError(
        422, code: "product_mismatch",
        detail:
          "the proof pays for \(products.isEmpty ? "nothing" : products), not \(order.productId)")
    }
    let token = order.appAccountToken.lowercased()
    if let byToken = sameProduct.first(where: { $0.appAccountToken?.lowercased() == token }) {
      return try checked(byToken, order)
    }
    let unbound = sameProduct.filter { $0.appAccountToken == nil }
    guard !unbound.isEmpty else {
      throw HTTPError(
        422, code: "account_token_mismatch",
        detail: "the transaction carries another order's app_account_token")
    }
    guard
      let free = unbound.sorted(by: { $0.purchaseDate > $1.purchaseDate })
        .first(where: { !usedElsewhere.contains($0.transactionId) })
    else {
      throw HTTPError(
        409, code: "transaction_already_used",
        detail:
          "every transaction for \(order.productId) in this proof already settled another order")
    }
    return try checked(free, order)
  }

  private static func checked(_ transaction: VerifiedTransaction, _ order: Order) throws
    -> VerifiedTransaction
  {
    guard transaction.quantity == Int(order.quantity) else {
      throw HTTPError(
        422, code: "quantity_mismatch",
        detail: "Apple charged for \(transaction.quantity), the order is for \(order.quantity)")
    }
    return transaction
  }
}
