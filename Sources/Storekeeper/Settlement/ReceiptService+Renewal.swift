import AppStore
import Postgres

extension ReceiptService {
  /// The order a posted renewal pays, when `transaction` is one: a later period of a subscription
  /// this user owns, carrying the token of `ordered`, the order that bought it and that its first
  /// transaction paid. Apple copies the token to every renewal, so without this the renewal would
  /// meet a paid order and be refused, never recorded: the period paid for lost whenever its
  /// notification is. Such a renewal gets an order of its own (`origin: renewal`), as
  /// `NotificationEffects.renew` gives one; nil for anything else. A renewal `recorded` without
  /// an owner (another user posted it first, and was told `not_yours`) is handed to that order,
  /// which its token alone could not claim.
  func renewalOrder(
    _ transaction: VerifiedTransaction, of ordered: Order, product: Product, recorded: Bool,
    on tx: PostgresTransaction
  ) async throws -> Order? {
    guard product.type == .autoRenewable, ordered.tradeStatus == .tradeSuccess,
      let paidBy = ordered.transactionId, paidBy != transaction.transactionId,
      transaction.originalTransactionId != transaction.transactionId,
      UserId.same(
        try await TransactionRecord.subscriber(
          originalTransactionId: transaction.originalTransactionId, on: tx), ordered.userId)
    else { return nil }
    guard
      let order = try await orders.createForPurchase(
        userId: ordered.userId, productId: product.productId, quantity: 1, origin: .renewal,
        reason: .createdForRenewal, cause: .receipt, on: tx)
    else { return nil }
    if recorded { try await TransactionRecord.assign(transaction.transactionId, to: order, on: tx) }
    return order
  }
}
