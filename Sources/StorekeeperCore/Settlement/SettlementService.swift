import AppStore
import Postgres

/// Settles an order with a verified Apple transaction, exactly once. One database
/// transaction locks the order and reads which of the proof's transactions other orders own;
/// one statement then claims the Apple transaction, moves the order, writes its event, credits
/// the ledger, settles the order's reports and wakes notifications that waited for it.
package struct SettlementService: Sendable {
  let database: PostgresPool
  let orders: OrderRepository
  let reports: ReportStore
  /// `SANDBOX_POLICY=credit`: sandbox purchases (App Review, TestFlight) credit balances like
  /// real ones; otherwise they settle and are recorded, and credit nothing.
  package var sandboxCredits = true
  /// With an App Store Server API key: a purchase that carries no app account token (made
  /// outside the app) is bound to the order it settles, through a Set App Account Token call
  /// queued in the settlement's own statement (`AccountTokenJobs`).
  package var bindsAccountTokens = false
  /// `REFUND_POLICY`: what a refund does about what was already spent.
  package var refundPolicy: RefundPolicy = .debt
  /// Whether consumption requests become jobs a worker answers (an App Store Server API key
  /// is configured).
  package var answersConsumption = false
  /// Called after a commit that recorded a transaction, so deferred notifications apply.
  let transactionRecorded: @Sendable () -> Void

  package init(
    database: PostgresPool, orders: OrderRepository, reports: ReportStore,
    sandboxCredits: Bool = true, transactionRecorded: @escaping @Sendable () -> Void
  ) {
    self.database = database
    self.orders = orders
    self.reports = reports
    self.sandboxCredits = sandboxCredits
    self.transactionRecorded = transactionRecorded
  }

  /// Settles order `tradeNo` with whichever of `transactions` pays it, or throws a
  /// `SettlementRefusal` saying why none does.
  func settle(
    _ tradeNo: String, product: Product, transactions: [VerifiedTransaction],
    record: ReportStore.Record?, cause: OrderEventCause
  ) async throws -> SettledOrder {
    // A refund the proof shows and no notification brought applies first: a refunded order is
    // refused as if the notification had come before the report.
    try await applyRefundsShown(by: transactions, cause: cause)
    // Another subscriber's renewal is credited to them first, and then cannot pay this order.
    var others: Set<String> = []
    if transactions.contains(where: { Self.isRenewal($0, of: product) }),
      let poster = try await orders.find(tradeNo)?.userId
    {
      others = try await creditOthersRenewals(
        transactions, product: product, poster: poster, cause: cause)
    }
    let candidates = transactions.filter { !others.contains($0.transactionId) }
    let settled = try await database.withTransaction { tx in
      guard
        let (order, used, revoked) = try await orders.lockForSettlement(
          tradeNo, transactionIds: candidates.map(\.transactionId), on: tx)
      else { throw SettlementRefusal.orderNotFound(tradeNo: tradeNo) }
      try OrderPayment.checkReopenable(order)
      let transaction: VerifiedTransaction
      do {
        transaction = try TransactionMatcher.match(
          order, in: candidates, usedElsewhere: used, avoid: revoked)
      } catch  where !others.isEmpty {
        throw SettlementRefusal.purchaseNotYours
      } catch let refusal as SettlementRefusal where Self.mayBeOwnPurchase(refusal) {
        // The user's own purchase that this order did not buy: their subscription's period
        // (carrying the token of the order that began it), or one they hold already.
        guard
          let (own, purchase) = try await ownPurchase(
            among: candidates, reportedOn: order, product: product, avoid: revoked, cause: cause,
            on: tx)
        else { throw refusal }
        return try await settleOwn(
          own, reportedOn: order, product: product, transaction: purchase,
          source: Self.source(of: purchase), cause: cause, record: record, on: tx)
      }
      return try await settleLocked(
        order, product: product, transaction: transaction, source: Self.source(of: transaction),
        cause: cause, record: record,
        appleRevoked: revoked.contains(transaction.transactionId), on: tx)
    }
    transactionRecorded()
    return settled
  }

  /// Settles an order that `tx` has locked (or just created). `events` go before the
  /// order's own (`order.paid`) in the same statement. `appleRevoked` is whether Apple's refund
  /// notifications revoke the transaction, when the caller read that with the order's lock
  /// (`lockForSettlement`); nil, it is read here.
  func settleLocked(
    _ order: Order, product: Product, transaction: VerifiedTransaction,
    source: TransactionSource, cause: OrderEventCause, record: ReportStore.Record?,
    events: [EventDraft] = [], appleRevoked: Bool? = nil, paidAsOrder: String? = nil,
    on tx: PostgresTransaction
  ) async throws -> SettledOrder {
    if order.tradeStatus == .tradeSuccess {
      var own = try await orderForSecondPurchase(transaction, of: order, cause: cause, on: tx)
      if own == nil {
        own = try await orderForOwnRenewal(
          transaction, of: order, product: product, cause: cause, on: tx)
      }
      if let own {
        return try await settleOwn(
          own, reportedOn: order, product: product, transaction: transaction, source: source,
          cause: cause, record: record, events: events, appleRevoked: appleRevoked, on: tx)
      }
      try await OrderPayment.repeated(
        order, paidBy: transaction.transactionId, record: record, reports: reports, on: tx)
      return OrderPayment.delivery(
        order, product: product, newlyGranted: false, sandboxCredits: sandboxCredits)
    }
    let transition = try OrderPayment.transition(order)
    // Apple's refund can arrive before the purchase is reported, and waits deferred until a
    // notification pass after this settlement: crediting now would let the currency be spent
    // before the refund takes it back. Decided here, with the order locked, for every path that
    // credits an Apple transaction.
    let revoked: Bool
    if let appleRevoked {
      revoked = appleRevoked
    } else {
      revoked = try await RefundHistory.revocation(transaction.transactionId, on: tx) != nil
    }
    if revoked {
      throw SettlementRefusal.transactionRevoked(productId: order.productId)
    }
    var effects = reports.settledEffects(record)
    if let credit = try OrderPayment.credit(
      product, purchaseId: transaction.transactionId, environment: transaction.environment,
      sandboxCredits: sandboxCredits)
    {
      effects.append(credit)
    }
    // Apple takes no token for a Family Sharing copy (4000185): its purchaser's purchase is
    // where one belongs.
    if bindsAccountTokens, !transaction.isFamilyShared,
      TransactionRecord.validToken(transaction.appAccountToken) == nil
    {
      effects.append(
        AccountTokenJobs.enqueueEffect(
          originalTransactionId: transaction.originalTransactionId,
          environment: transaction.environment, order: order))
    }
    effects.append(
      DeferredNotifications.wakeEffect(
        transactionId: transaction.transactionId,
        originalTransactionId: transaction.originalTransactionId))
    let changed = try await orders.transition(
      .order(order.tradeNo), transition, cause: cause,
      detail: .object([
        "transaction_id": .string(transaction.transactionId),
        "environment": .string(transaction.environment),
        "previous_close_reason": order.closeReason.map { .string($0.rawValue) } ?? .null,
      ]),
      payment: .init(
        transactionId: transaction.transactionId, environment: transaction.environment,
        paidAsOrder: paidAsOrder),
      requires: TransactionRecord.claim(transaction, for: order, source: source),
      effects: effects, events: events, on: tx)
    guard let settled = changed.first else {
      throw SettlementRefusal.transactionAlreadyUsed(
        transactionId: transaction.transactionId, productId: order.productId)
    }
    return OrderPayment.delivery(
      settled, product: product, newlyGranted: true, sandboxCredits: sandboxCredits)
  }

  /// An order of its own for a purchase made with the app account token of `order`, which
  /// another purchase already paid: the app bought twice with one order (its purchase call
  /// seemed to fail and it tried again), or a purchase without a token took the order first (a
  /// restore pays the user's oldest unpaid order for the product). Apple charged for both, so
  /// both are credited; refusing the second lost it for good, as no path could record it. Nil
  /// for another period of the subscription that paid the order (a renewal or a resubscription
  /// pays an order of its own through the renewal path) and for one Apple refunded (nothing
  /// to credit). One already settled so on an order of the same user is that order again, so
  /// the report told again is answered as it was; another recorded one is the claim's to judge.
  func orderForSecondPurchase(
    _ transaction: VerifiedTransaction, of order: Order, cause: OrderEventCause,
    on tx: PostgresTransaction
  ) async throws -> Order? {
    guard order.tradeStatus == .tradeSuccess, let paidBy = order.transactionId,
      paidBy != transaction.transactionId
    else { return nil }
    let related = try await tx.query(
      """
      SELECT (SELECT t.trade_no FROM apple_transactions t
              WHERE t.transaction_id = \(transaction.transactionId)
                AND t.user_id = \(order.userId)) AS settled_on,
             EXISTS (SELECT 1 FROM apple_transactions
                     WHERE transaction_id = \(transaction.transactionId)) AS known,
             EXISTS (SELECT 1 FROM apple_transactions
                     WHERE transaction_id = \(paidBy)
                       AND original_transaction_id = \(transaction.originalTransactionId))
               AS same_subscription
      """
    ).first
    guard let related, try related.decode("same_subscription", as: Bool.self) == false else {
      return nil
    }
    if let settledOn: String = try related.decodeIfPresent("settled_on") {
      return settledOn == order.tradeNo ? nil : try await orders.find(settledOn, lock: true, on: tx)
    }
    guard try related.decode("known", as: Bool.self) == false,
      try await RefundHistory.revocation(transaction.transactionId, on: tx) == nil
    else { return nil }
    return try await orders.createForPurchase(
      userId: order.userId, productId: order.productId, quantity: order.quantity,
      origin: .receipt, reason: .createdForReceipt, cause: cause,
      detail: .object(["bought_with_order": .string(order.tradeNo)]),
      storefront: transaction.storefront, on: tx)
  }

  /// Apple's receipts carry no transaction type; signed transactions always do.
  static func source(of transaction: VerifiedTransaction) -> TransactionSource {
    transaction.type == nil ? .receipt : .signedTransaction
  }
}
