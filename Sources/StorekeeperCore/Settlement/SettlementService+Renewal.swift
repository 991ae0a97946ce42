import AppStore
import Postgres

// Issue 22: a renewal belongs to its subscription's owner, whoever posts it. Apple's renewal
// names no user, and a subscription bought without an order carries no token either, so the
// one sure owner is the user Storekeeper recorded for the subscription's earlier periods.
// Before this rule, a renewal whose DID_RENEW had not arrived went to whoever posted it first,
// and, owned, made them the subscriber of every later period: the payer's access lapsed.
extension SettlementService {
  /// The user a renewal belongs to: the subscriber recorded for its subscription. Nil for
  /// anything that is not a renewal of `product`, and for a subscription nobody owns yet, where
  /// the ordinary rules hold (its order's token, else its first poster).
  func subscriber(
    ofRenewal transaction: VerifiedTransaction, product: Product, on tx: PostgresTransaction
  ) async throws -> String? {
    guard Self.isRenewal(transaction, of: product) else { return nil }
    return try await TransactionRecord.subscriber(
      originalTransactionId: transaction.originalTransactionId, on: tx)
  }

  static func isRenewal(_ transaction: VerifiedTransaction, of product: Product) -> Bool {
    product.type == .autoRenewable && product.productId == transaction.productId
      && transaction.originalTransactionId != transaction.transactionId
  }

  /// The unpaid order of `userId` for `product` whose token `transaction` carries and which
  /// it can pay, locked: a period bought in the app (an upgrade, a resubscription) with an
  /// order of the subscriber's own, whose report may come after. Nil when there is none (a
  /// renewal carries its first purchase's token, whose order is paid already). A period that
  /// carries no token (an app that sets none, as seed 004's) and changes the subscription's
  /// product (`changesProduct`: an upgrade, crossgrade or downgrade, which only the subscriber
  /// chooses) or that Apple announced as the subscriber's choice (`subscriberChose`: SUBSCRIBED,
  /// a resubscription, or OFFER_REDEEMED) pays the subscriber's latest order for the product
  /// still waiting for payment and made before it was bought. Otherwise nothing tells a
  /// resubscription without a token from a renewal after a billing recovery, so it pays an
  /// order of its own, as any renewal. A period that carries the token of a subscriber's order
  /// another purchase paid (the one that began the subscription: Apple's later periods keep its
  /// token, a resubscription in the app too) names no order for this period, so it is judged as
  /// one without a token; a token of another user's order, or one never issued, names none.
  func appOrder(
    paying transaction: VerifiedTransaction, for userId: String, product: Product,
    subscriberChose: Bool = false, on tx: PostgresTransaction
  ) async throws -> Order? {
    if let token = TransactionRecord.validToken(transaction.appAccountToken) {
      guard
        let named = try await orders.find(
          accountToken: token, store: .appStore, lock: true, on: tx),
        UserId.same(named.userId, userId)
      else { return nil }
      if named.transactionId == nil || named.transactionId == transaction.transactionId {
        guard named.productId == product.productId, named.tradeStatus != .tradeSuccess,
          named.transactionId == nil,
          (try? TransactionMatcher.match(named, in: [transaction], usedElsewhere: [])) != nil
        else { return nil }
        return named
      }
    }
    let chosen = subscriberChose ? true : try await Self.changesProduct(transaction, on: tx)
    guard chosen,
      let order = try await orders.waitingOrder(
        userId: userId, productId: product.productId, madeBefore: transaction.purchaseDate,
        on: tx),
      TransactionMatcher.ordered(transaction, with: order)
    else { return nil }
    return order
  }

  /// Whether `transaction` is of another product than its subscription's period before it (an
  /// upgrade, crossgrade or downgrade). False when no earlier period is recorded.
  static func changesProduct(_ transaction: VerifiedTransaction, on tx: PostgresTransaction)
    async throws -> Bool
  {
    var query: PostgresQuery = """
      SELECT product_id <> \(transaction.productId) AS changes FROM apple_transactions
      WHERE original_transaction_id = \(transaction.originalTransactionId)
        AND transaction_id <> \(transaction.transactionId) AND purchase_date <
      """
    query.append(TransactionRecord.time(transaction.purchaseDate))
    query.append(" ORDER BY purchase_date DESC LIMIT 1")
    return try await tx.query(query).first?.decode("changes", as: Bool.self) ?? false
  }

  /// The order a renewal posted in a proof pays: the subscriber's own order that bought it in
  /// the app (`appOrder`: an upgrade or resubscription whose report is not here yet, which
  /// then finds its order paid instead of its purchase taken), else a new one
  /// (`origin: renewal`), as `NotificationEffects.renew` gives: the order that bought the
  /// subscription is paid long since. A renewal `recorded` without an owner is handed to the
  /// order here, because `TransactionRecord.claim` would refuse a row that carries none of its
  /// token.
  func renewalOrder(
    for subscriber: String, _ transaction: VerifiedTransaction, product: Product,
    recorded: Bool, cause: OrderEventCause, on tx: PostgresTransaction
  ) async throws -> Order? {
    if let named = try await appOrder(
      paying: transaction, for: subscriber, product: product, on: tx),
      (try? OrderPayment.checkReopenable(named)) != nil
    {
      if recorded {
        try await TransactionRecord.assign(transaction.transactionId, to: named, on: tx)
      }
      return named
    }
    guard
      let order = try await orders.createForPurchase(
        userId: subscriber, productId: product.productId, quantity: 1, origin: .renewal,
        reason: .createdForRenewal, cause: cause, storefront: transaction.storefront, on: tx)
    else { return nil }
    if recorded { try await TransactionRecord.assign(transaction.transactionId, to: order, on: tx) }
    return order
  }

  /// The order a renewal pays when its subscriber reports it on the order that bought the
  /// subscription (a StoreKit 2 app reporting `Transaction.updates` with the trade number it
  /// kept; the renewal carries that order's token): a renewal order, as a restore or DID_RENEW
  /// gives, or the one it already paid, so a repeat is answered the same. Nil for anything else
  /// (another product, not the order's user's subscription, refunded), which the paid order's
  /// own rules judge.
  func orderForOwnRenewal(
    _ transaction: VerifiedTransaction, of order: Order, product: Product,
    cause: OrderEventCause, on tx: PostgresTransaction
  ) async throws -> Order? {
    guard order.tradeStatus == .tradeSuccess, order.transactionId != transaction.transactionId,
      Self.isRenewal(transaction, of: product), transaction.revocationDate == nil,
      let subscriber = try await TransactionRecord.subscriber(
        originalTransactionId: transaction.originalTransactionId, holding: order, on: tx),
      UserId.same(subscriber, order.userId)
    else { return nil }
    let known = try await TransactionRecord.find(transaction.transactionId, on: tx)
    if let known, let owner = known.userId {
      guard UserId.same(owner, subscriber), let tradeNo = known.tradeNo, tradeNo != order.tradeNo
      else { return nil }
      return try await orders.find(tradeNo, lock: true, on: tx)
    }
    guard known?.revoked != true,
      try await RefundHistory.revocation(transaction.transactionId, on: tx) == nil
    else { return nil }
    return try await renewalOrder(
      for: subscriber, transaction, product: product, recorded: known != nil, cause: cause, on: tx)
  }

  /// For a report on `poster`'s order: credits each renewal of `product` among `transactions`
  /// whose subscriber is someone else to that subscriber now, each in a database transaction
  /// of its own (committed whatever the poster's report comes to), and returns their ids, none
  /// of which may pay the poster's order.
  func creditOthersRenewals(
    _ transactions: [VerifiedTransaction], product: Product, poster: String,
    cause: OrderEventCause
  ) async throws -> Set<String> {
    var others: Set<String> = []
    for transaction in transactions where Self.isRenewal(transaction, of: product) {
      if try await creditIfOthers(transaction, product: product, poster: poster, cause: cause) {
        others.insert(transaction.transactionId)
      }
    }
    if !others.isEmpty { transactionRecorded() }
    return others
  }

  /// True when the renewal is not `poster`'s: credited to its subscriber now, or already
  /// someone else's, or refunded (then nobody's to credit).
  private func creditIfOthers(
    _ transaction: VerifiedTransaction, product: Product, poster: String,
    cause: OrderEventCause
  ) async throws -> Bool {
    do {
      return try await database.withTransaction { tx in
        guard
          let subscriber = try await subscriber(ofRenewal: transaction, product: product, on: tx),
          !UserId.same(subscriber, poster)
        else { return false }
        let known = try await TransactionRecord.find(transaction.transactionId, on: tx)
        if let owner = known?.userId { return !UserId.same(owner, poster) }
        if known?.revoked == true || transaction.revocationDate != nil { return true }
        if try await RefundHistory.revocation(transaction.transactionId, on: tx) != nil {
          return true
        }
        guard
          let order = try await renewalOrder(
            for: subscriber, transaction, product: product, recorded: known != nil,
            cause: cause, on: tx)
        else { return true }
        _ = try await settleLocked(
          order, product: product, transaction: transaction, source: Self.source(of: transaction),
          cause: cause, record: nil, on: tx)
        return true
      }
    } catch SettlementRefusal.transactionAlreadyUsed {
      // Its notification or another post recorded it meanwhile, for the subscriber.
      return true
    }
  }
}
