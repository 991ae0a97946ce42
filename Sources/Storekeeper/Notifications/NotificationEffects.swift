import AppStore
import Postgres

/// What one notification does to orders, the ledger and subscriptions, inside the caller's
/// database transaction. Order changes go through `OrderRepository.transition` like every
/// other path; a type Storekeeper does not know is left `unhandled`, never silently processed.
struct NotificationEffects {
  let settlement: SettlementService
  let catalog: CatalogRepository
  let clock: WallClock
  let tx: PostgresTransaction
  let uuid: String
  /// Who applies these effects, as order events record it: a notification, or the reconcile
  /// pass repairing what a lost notification would have done (through these same methods).
  var cause: OrderEventCause = .notification
  var eventDetail: JSONValue? = nil
  var source: TransactionSource = .notification

  private var orders: OrderRepository { settlement.orders }
  private var detail: JSONValue { eventDetail ?? .object(["notification_uuid": .string(uuid)]) }

  func apply(_ stored: StoredNotification) async throws -> NotificationOutcome {
    guard let type = stored.notification.notificationTypeValue else {
      return NotificationOutcome(state: .unhandled, result: "unknown_type")
    }
    let transaction = stored.transaction?.verifiedTransaction
    let original = transaction?.originalTransactionId ?? stored.renewalInfo?.originalTransactionId
    switch type {
    case .refund, .revoke:
      guard let transaction else { return .processed("no_transaction") }
      return try await revoke(transaction, reason: type == .refund ? .refunded : .revoked)
    case .refundReversed:
      guard let transaction else { return .processed("no_transaction") }
      return try await reinstate(transaction)
    case .subscribed, .didRenew, .offerRedeemed:
      guard let transaction else { return .processed("no_transaction") }
      return try await renew(transaction)
    case .renewalExtended:
      guard let transaction else { return .processed("no_transaction") }
      let (known, _) = try await TransactionRecord.lock(transaction.transactionId, on: tx)
      guard known else { return .deferred("transaction_unknown") }
      try await TransactionRecord.updateExpiry(transaction, on: tx)
      return .processed("dates_updated")
    case .expired, .gracePeriodExpired:
      if let transaction { try await TransactionRecord.updateExpiry(transaction, on: tx) }
      if let original { try await subscriptionState(original, .expired, graceMs: nil) }
      return .processed("expired")
    case .didFailToRenew:
      guard let original else { return .processed("no_transaction") }
      // The period that just ended is Apple's; a grace period extends access beyond it.
      if let transaction { try await TransactionRecord.updateExpiry(transaction, on: tx) }
      if stored.notification.subtype == "GRACE_PERIOD",
        let grace = stored.renewalInfo?.gracePeriodExpiresDate
      {
        try await subscriptionState(original, .gracePeriod, graceMs: grace)
        return .processed("grace_period")
      }
      try await subscriptionState(original, .billingRetry, graceMs: nil)
      return .processed("billing_retry")
    case .consumptionRequest:
      return .processed("listed_for_admins")
    case .test:
      return .processed("test")
    case .didChangeRenewalPref, .didChangeRenewalStatus, .priceIncrease, .refundDeclined,
      .renewalExtension, .externalPurchaseToken, .oneTimeCharge, .metadataUpdate, .migration,
      .priceChange:
      // Known, and nothing a user owns changes with them.
      return .processed("no_effect")
    }
  }

  /// The order a known transaction paid, locked; `known` is false for a transaction never seen.
  private func lockedOrder(_ transactionId: String) async throws -> (known: Bool, order: Order?) {
    let (known, tradeNo) = try await TransactionRecord.lock(transactionId, on: tx)
    guard let tradeNo else { return (known, nil) }
    return (true, try await orders.find(tradeNo, lock: true, on: tx))
  }

  func revoke(_ transaction: VerifiedTransaction, reason: OrderEventReason) async throws
    -> NotificationOutcome
  {
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known else { return .deferred("transaction_unknown") }
    try await TransactionRecord.setRevocation(
      transaction.transactionId, atMs: transaction.revocationDate ?? clock.milliseconds,
      reason: transaction.revocationReason, on: tx)
    // Known but not yet anyone's (a legacy receipt posted without a user): wait, like an
    // unknown transaction, until settlement gives it an order; then the refund applies.
    guard let order else { return .deferred("transaction_has_no_order") }
    guard
      let transition = try? OrderStateMachine.transition(
        from: order.tradeStatus, closeReason: order.closeReason, on: reason)
    else { return .processed("already_closed") }
    try await change(order, transition, ledger: .refund, transactionId: transaction.transactionId)
    return .processed(reason.rawValue)
  }

  func reinstate(_ transaction: VerifiedTransaction) async throws -> NotificationOutcome {
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known else { return .deferred("transaction_unknown") }
    try await TransactionRecord.setRevocation(
      transaction.transactionId, atMs: nil, reason: nil, on: tx)
    guard let order else { return .deferred("transaction_has_no_order") }
    guard
      let transition = try? OrderStateMachine.transition(
        from: order.tradeStatus, closeReason: order.closeReason, on: .refundReversed)
    else { return .processed("not_refunded") }
    try await change(
      order, transition, ledger: .refundReversed, transactionId: transaction.transactionId)
    return .processed("refund_reversed")
  }

  private func change(
    _ order: Order, _ transition: OrderTransition, ledger kind: LedgerKind, transactionId: String
  ) async throws {
    try await orders.transition(
      .order(order.tradeNo), transition, cause: cause, detail: detail,
      effects: [Ledger.reverse(kind, transactionId: transactionId)], on: tx)
  }

  /// A renewal nobody reported still counts: it is recorded, and settles an order of its own
  /// for the user who owns the original transaction.
  func renew(_ transaction: VerifiedTransaction) async throws -> NotificationOutcome {
    let (known, _) = try await TransactionRecord.lock(transaction.transactionId, on: tx)
    if known {
      try await TransactionRecord.updateExpiry(transaction, on: tx)
      try await subscriptionState(transaction.originalTransactionId, .active, graceMs: nil)
      return .processed("dates_updated")
    }
    guard
      let userId = try await TransactionRecord.subscriber(
        originalTransactionId: transaction.originalTransactionId, on: tx)
    else { return .deferred("original_transaction_unknown") }
    guard let product = try await catalog.product(transaction.productId, on: tx),
      let order = try await orders.createForPurchase(
        userId: userId, productId: product.productId, quantity: 1, origin: .renewal,
        reason: .createdForRenewal, cause: cause, detail: detail, on: tx)
    else { return .processed("unknown_product") }
    _ = try await settlement.settleLocked(
      order, product: product, transaction: transaction, source: source,
      cause: cause, record: nil, on: tx)
    try await subscriptionState(transaction.originalTransactionId, .active, graceMs: nil)
    return .processed("renewal_recorded")
  }

  func subscriptionState(_ original: String, _ status: SubscriptionStatus, graceMs: Int64?)
    async throws
  {
    var query: PostgresQuery = """
      INSERT INTO subscription_states (original_transaction_id, status, grace_expires_at)
      VALUES (\(original), \(status),
      """
    query.append(TransactionRecord.time(graceMs))
    query.append(
      """
      ) ON CONFLICT (original_transaction_id) DO UPDATE
        SET status = EXCLUDED.status, grace_expires_at = EXCLUDED.grace_expires_at, updated_at = now()
      """)
    try await tx.execute(query)
  }
}
