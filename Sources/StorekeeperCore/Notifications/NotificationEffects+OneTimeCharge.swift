import AppStore
import Postgres

extension NotificationEffects {
  /// ONE_TIME_CHARGE: Apple charged a consumable, non-consumable or non-renewing purchase. Like
  /// a renewal nobody reported, the notification itself settles it when it can say whose it is:
  /// the order whose `app_account_token` the purchase carries, if the purchase is what that
  /// order asked for (the same check a report's purchase passes). A purchase already recorded
  /// (its report came first) only gets its event; one naming no order waits, deferred, for the
  /// report that makes it known.
  func charge(_ transaction: VerifiedTransaction, notice: [String: JSONValue]) async throws
    -> NotificationOutcome
  {
    if let known = try await TransactionRecord.find(transaction.transactionId, on: tx) {
      if let userId = known.userId {
        var charged = notice
        if let tradeNo = known.tradeNo { charged["trade_no"] = .string(tradeNo) }
        try await outbox.append([EventDraft(.purchaseCharged, charged)], for: userId, on: tx)
      }
      return .processed(.alreadySettled)
    }
    guard let token = TransactionRecord.validToken(transaction.appAccountToken),
      let order = try await orders.find(
        accountToken: token, store: .appStore, lock: true, on: tx)
    else { return .deferred(.transactionUnknown) }
    guard let product = try await catalog.product(transaction.productId, on: tx) else {
      return .processed(.unknownProduct)
    }
    guard (try? TransactionMatcher.match(order, in: [transaction], usedElsewhere: [])) != nil
    else { return .processed(.notSettled) }
    // A second purchase made with an order another purchase paid settles on an order of its
    // own, which its event names.
    let paying =
      try await settlement.orderForSecondPurchase(transaction, of: order, cause: cause, on: tx)
      ?? order
    var charged = notice
    charged["trade_no"] = .string(paying.tradeNo)
    do {
      _ = try await settlement.settleLocked(
        paying, product: product, transaction: transaction, source: source, cause: cause,
        record: nil, events: [EventDraft(.purchaseCharged, charged)], on: tx)
    } catch is SettlementRefusal {
      // Paid by another purchase, or closed for good: the claim changed nothing, and a report
      // of this purchase is judged as any other.
      return .processed(.notSettled)
    }
    return .processed(.settled)
  }

  /// REFUND_DECLINED: Apple kept the purchase; nothing a user owns changes, and its owner's
  /// backend hears it. A purchase not yet known waits, like a refund, for its report.
  func refundDeclined(_ transaction: VerifiedTransaction, notice: [String: JSONValue])
    async throws -> NotificationOutcome
  {
    guard let known = try await TransactionRecord.find(transaction.transactionId, on: tx) else {
      return .deferred(.transactionUnknown)
    }
    guard let userId = known.userId else { return .deferred(.transactionHasNoOrder) }
    var declined = notice
    if let tradeNo = known.tradeNo { declined["trade_no"] = .string(tradeNo) }
    try await outbox.append([EventDraft(.purchaseRefundDeclined, declined)], for: userId, on: tx)
    return .processed(.refundDeclined)
  }
}
