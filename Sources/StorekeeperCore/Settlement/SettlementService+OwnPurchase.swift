import AppStore
import Postgres

// Audit storekit2, finding 1: a report names the order the app just made, and the proof may be
// of a purchase that order did not buy and that is its user's all the same. A period of their
// own subscription carries the token of the order that began it (Apple's later periods keep
// it), so their resubscription or renewal reported on a new order was refused 422
// `account_token_mismatch` and nothing was recorded, though a stranger's report of it, a
// restore or the notification credited it. And StoreKit answers the purchase of something
// owned with the existing transaction, which was refused 422 or 409 to its owner.
extension SettlementService {
  /// Whether a refusal of the matcher may be about a purchase of the order's own user: another
  /// order's token, or a purchase another order holds. Every other refusal stands.
  static func mayBeOwnPurchase(_ refusal: SettlementRefusal) -> Bool {
    switch refusal {
    case .accountTokenMismatch, .transactionAlreadyUsed: true
    default: false
    }
  }

  /// The order that is to settle, in place of `order`, a purchase of `order`'s user among
  /// `transactions` (of `order`'s product, not refunded) that the matcher refused for `order`,
  /// and that purchase; nil when none is theirs, and the refusal stands. The newest period of
  /// the user's own subscription not yet credited is first: `order` if the app made it for that
  /// period (`TransactionMatcher.ordered`), else an order of its own through `renewalOrder`, as
  /// a restore or DID_RENEW gives. Otherwise a purchase this user holds already is the order
  /// that holds it, answered as a repeat of its report. Only the user's own purchases are so
  /// answered: one another user holds, a period of another user's subscription, or one carrying
  /// a token of another user's order or one never issued stays refused as before.
  func ownPurchase(
    among transactions: [VerifiedTransaction], reportedOn order: Order, product: Product,
    avoid revoked: Set<String>, cause: OrderEventCause, on tx: PostgresTransaction
  ) async throws -> (order: Order, transaction: VerifiedTransaction)? {
    let candidates = transactions.filter {
      $0.productId == order.productId && $0.revocationDate == nil
        && !revoked.contains($0.transactionId)
    }.sorted { $0.purchaseDate > $1.purchaseDate }
    var held: (order: Order, transaction: VerifiedTransaction)?
    for transaction in candidates {
      let known = try await TransactionRecord.find(transaction.transactionId, on: tx)
      if let owner = known?.userId {
        if held == nil, UserId.same(owner, order.userId), let tradeNo = known?.tradeNo,
          let holder = try await orders.find(tradeNo, lock: true, on: tx)
        {
          held = (holder, transaction)
        }
        continue
      }
      if let payer = try await orderForOwnPeriod(
        transaction, known: known, reportedOn: order, product: product, cause: cause, on: tx)
      {
        return (payer, transaction)
      }
    }
    return held
  }

  /// The order a period of `order`'s user's own subscription, recorded for nobody yet, pays:
  /// `order` if the app made it for the period, else the renewal path's. Nil when the period is
  /// not theirs (another subscriber's, or carrying a token of an order not theirs) or refunded.
  private func orderForOwnPeriod(
    _ transaction: VerifiedTransaction, known: TransactionRecord.Known?, reportedOn order: Order,
    product: Product, cause: OrderEventCause, on tx: PostgresTransaction
  ) async throws -> Order? {
    guard Self.isRenewal(transaction, of: product), known?.revoked != true,
      let subscriber = try await TransactionRecord.subscriber(
        originalTransactionId: transaction.originalTransactionId, holding: order, on: tx),
      UserId.same(subscriber, order.userId),
      try await RefundHistory.revocation(transaction.transactionId, on: tx) == nil
    else { return nil }
    if let token = TransactionRecord.validToken(transaction.appAccountToken) {
      guard
        let named = try await orders.find(
          accountToken: token, store: .appStore, lock: false, on: tx),
        UserId.same(named.userId, order.userId)
      else { return nil }
    }
    guard TransactionMatcher.ordered(transaction, with: order) else {
      return try await renewalOrder(
        for: subscriber, transaction, product: product, recorded: known != nil, cause: cause,
        on: tx)
    }
    // `claim` would refuse a row recorded without an owner that carries another order's token.
    if known != nil {
      try await TransactionRecord.assign(transaction.transactionId, to: order, on: tx)
    }
    return order
  }

  /// Settles `own`, which holds or is to hold the purchase reported on `order`: the report
  /// stored for `order` is answered by this settlement, and a new one is kept on `own`.
  func settleOwn(
    _ own: Order, reportedOn order: Order, product: Product, transaction: VerifiedTransaction,
    source: TransactionSource, cause: OrderEventCause, record: ReportStore.Record?,
    events: [EventDraft] = [], appleRevoked: Bool? = nil, on tx: PostgresTransaction
  ) async throws -> SettledOrder {
    var kept = record
    if own.tradeNo != order.tradeNo {
      if case .stored(let id) = record {
        try await reports.finish(id, outcome: .settled, code: nil, on: tx)
      }
      if case .new = record {} else { kept = nil }
    }
    return try await settleLocked(
      own, product: product, transaction: transaction, source: source, cause: cause,
      record: kept, events: events, appleRevoked: appleRevoked, on: tx)
  }
}
