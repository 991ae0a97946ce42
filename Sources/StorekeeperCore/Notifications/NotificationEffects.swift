import AppStore
import Postgres

/// What one notification does to orders, the ledger and subscriptions, inside the caller's
/// database transaction. Order changes go through `OrderRepository.transition` like every
/// other path; a type Storekeeper does not know is left `unhandled`, never silently processed.
package struct NotificationEffects {
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

  package init(
    settlement: SettlementService, catalog: CatalogRepository, clock: WallClock,
    tx: PostgresTransaction, uuid: String, cause: OrderEventCause = .notification,
    eventDetail: JSONValue? = nil, source: TransactionSource = .notification
  ) {
    self.settlement = settlement
    self.catalog = catalog
    self.clock = clock
    self.tx = tx
    self.uuid = uuid
    self.cause = cause
    self.eventDetail = eventDetail
    self.source = source
  }

  var orders: OrderRepository { settlement.orders }
  var outbox: EventOutbox { settlement.orders.outbox }
  private var detail: JSONValue { eventDetail ?? .object(["notification_uuid": .string(uuid)]) }

  package func apply(_ stored: StoredNotification) async throws -> NotificationOutcome {
    guard let type = stored.notification.notificationTypeValue else {
      return NotificationOutcome(state: .unhandled, result: .unknownType)
    }
    let transaction = stored.transaction?.verifiedTransaction
    let original = transaction?.originalTransactionId ?? stored.renewalInfo?.originalTransactionId
    let notice = Self.notice(stored, uuid: uuid, transaction: transaction, original: original)
    switch type {
    case .refund, .revoke:
      guard let transaction else { return .processed(.noTransaction) }
      if try await superseded(refundOf: transaction) { return .processed(.superseded) }
      if type == .refund, let outcome = try await proratedRefund(transaction, notice: notice) {
        return outcome
      }
      return try await revoke(
        transaction, reason: type == .refund ? .refunded : .revoked, notice: notice)
    case .refundReversed:
      guard let transaction else { return .processed(.noTransaction) }
      if try await superseded(refundOf: transaction) { return .processed(.superseded) }
      return try await reinstate(transaction, notice: notice)
    case .subscribed, .didRenew, .offerRedeemed:
      guard let transaction else { return .processed(.noTransaction) }
      // SUBSCRIBED and OFFER_REDEEMED are periods the subscriber bought; DID_RENEW is Apple's.
      return try await renew(
        transaction, events: type == .didRenew ? [EventDraft(.subscriptionRenewed, notice)] : [],
        notice: notice, subscriberChose: type != .didRenew)
    case .renewalExtended:
      guard let transaction else { return .processed(.noTransaction) }
      let (known, owned) = try await TransactionRecord.lock(transaction.transactionId, on: tx)
      guard known else { return .deferred(.transactionUnknown) }
      // A renewal kept without an owner is still its subscriber's period, whichever
      // notification about it comes first.
      if owned == nil, transaction.transactionId != transaction.originalTransactionId {
        return try await renew(transaction, events: [], notice: notice)
      }
      try await TransactionRecord.updateExpiry(transaction, onlyLater: true, on: tx)
      try await outbox.append(
        [], forSubscription: transaction.originalTransactionId, cause: notice, on: tx)
      return .processed(.datesUpdated)
    case .expired, .gracePeriodExpired:
      // An expiry Apple signed before the subscription's later renewal (a retry, or history
      // recovery, delivering it late) must not mark a renewed subscription expired, nor move
      // its period's end back.
      if let original,
        try await RefundHistory.superseded(
          uuid, types: Self.subscriptionStateTypes, key: .subscription(original), on: tx)
      {
        // Stored all the same, it may end a grace period the charts read.
        try await markChartUnitChanged(original)
        return .processed(.superseded)
      }
      if let transaction { try await TransactionRecord.updateExpiry(transaction, on: tx) }
      if let original {
        let changed = try await subscriptionState(
          original, .expired, graceMs: nil, endedAtMs: stored.notification.signedDate)
        try await outbox.append(
          changed ? [EventDraft(.subscriptionExpired, notice)] : [], forSubscription: original,
          on: tx)
      }
      return .processed(.expired)
    case .didFailToRenew:
      guard let original else { return .processed(.noTransaction) }
      // A billing problem Apple signed before the subscription's later renewal or expiry is
      // over already: applied now it would put a renewed subscription into billing retry.
      if try await RefundHistory.superseded(
        uuid, types: Self.subscriptionStateTypes, key: .subscription(original), on: tx)
      {
        // Stored all the same, it may begin or end a grace period the charts read.
        try await markChartUnitChanged(original)
        return .processed(.superseded)
      }
      // The period that just ended is Apple's; a grace period extends access beyond it.
      if let transaction { try await TransactionRecord.updateExpiry(transaction, on: tx) }
      var problem = notice
      if stored.notification.subtype == "GRACE_PERIOD",
        let grace = stored.renewalInfo?.gracePeriodExpiresDate
      {
        let changed = try await subscriptionState(original, .gracePeriod, graceMs: grace)
        problem["status"] = .string(SubscriptionStatus.gracePeriod.rawValue)
        problem["grace_expires_at"] = EventTime.value(ms: grace)
        try await outbox.append(
          changed ? [EventDraft(.subscriptionBillingProblem, problem)] : [],
          forSubscription: original, on: tx)
        return .processed(.gracePeriod)
      }
      let changed = try await subscriptionState(
        original, .billingRetry, graceMs: nil, endedAtMs: stored.notification.signedDate)
      problem["status"] = .string(SubscriptionStatus.billingRetry.rawValue)
      try await outbox.append(
        changed ? [EventDraft(.subscriptionBillingProblem, problem)] : [],
        forSubscription: original, on: tx)
      return .processed(.billingRetry)
    case .consumptionRequest:
      if settlement.answersConsumption, let transaction {
        try await ConsumptionAnswers.enqueue(
          notificationUuid: uuid, transactionId: transaction.transactionId,
          environment: transaction.environment, signedDateMs: stored.notification.signedDate,
          nowMs: clock.milliseconds, on: tx)
      }
      if let original {
        var request = notice
        request["reason"] = stored.notification.data?.consumptionRequestReason.map(JSONValue.string)
        try await outbox.append(
          [EventDraft(.consumptionRequested, request.filter { $0.value != .null })],
          forSubscription: original, on: tx)
      }
      return .processed(.listedForAdmins)
    case .test:
      return .processed(.test)
    case .oneTimeCharge:
      guard let transaction else { return .processed(.noTransaction) }
      return try await charge(transaction, notice: notice)
    case .refundDeclined:
      guard let transaction else { return .processed(.noTransaction) }
      return try await refundDeclined(transaction, notice: notice)
    case .rescindConsent:
      return try await rescindConsent(stored, notice: notice)
    case .didChangeRenewalPref
    where stored.notification.subtype == NotificationSubtype.upgrade.rawValue:
      // An upgrade or crossgrade starts a new period of another product at once, signed as the
      // transaction here: paid like a renewal, to the subscriber. The period it replaces ends
      // where this one begins (storekeeper_user_state). A downgrade waits for the renewal date.
      guard let transaction else { return .processed(.noTransaction) }
      return try await renew(transaction, events: [], notice: notice)
    case .didChangeRenewalStatus:
      return try await autoRenewChanged(stored, original: original, notice: notice)
    case .didChangeRenewalPref, .priceIncrease,
      .renewalExtension, .externalPurchaseToken, .metadataUpdate, .migration,
      .priceChange:
      // Known, and nothing a user owns changes with them.
      return .processed(.noEffect)
    }
  }

  /// DID_CHANGE_RENEWAL_STATUS: the subscriber turned renewal off (a voluntary cancellation,
  /// the moment a win-back flow needs) or on again. Access does not change; the subscriber's
  /// backend hears it, unless Apple signed a later word on the same subscription's renewal (a
  /// retry delivering old news): another change of its status, or a notification that sets its
  /// state (an expiry ends it, a resubscription or renewal has it on), so that a cancellation
  /// delivered after the customer resubscribed does not tell the backend they left.
  private func autoRenewChanged(
    _ stored: StoredNotification, original: String?, notice: [String: JSONValue]
  ) async throws -> NotificationOutcome {
    guard let original else { return .processed(.noTransaction) }
    if try await RefundHistory.superseded(
      uuid, types: Self.renewalStatusTypes, key: .subscription(original), on: tx)
    {
      return .processed(.superseded)
    }
    var changed = notice
    changed["auto_renew"] = .bool(
      stored.notification.subtype == NotificationSubtype.autoRenewEnabled.rawValue
        || (stored.notification.subtype == nil && stored.renewalInfo?.autoRenewStatus == 1))
    try await outbox.append(
      [EventDraft(.subscriptionAutoRenewChanged, changed)], forSubscription: original, on: tx)
    return .processed(.autoRenewChanged)
  }

  /// The notifications whose transaction is a period `renew` pays.
  static let renewalTypes = [
    NotificationType.subscribed, .didRenew, .offerRedeemed, .renewalExtended,
    .didChangeRenewalPref,
  ].map(\.rawValue)

  /// The notifications that decide whether a purchase stays refunded.
  static let refundTypes = [
    NotificationType.refund, .revoke, .refundReversed,
  ].map(\.rawValue)

  /// The notifications that say whether a subscription will renew.
  static let renewalStatusTypes =
    [NotificationType.didChangeRenewalStatus.rawValue] + subscriptionStateTypes

  /// The notifications that set a subscription's renewal state.
  static let subscriptionStateTypes = [
    NotificationType.subscribed, .didRenew, .offerRedeemed, .expired, .gracePeriodExpired,
    .didFailToRenew,
  ].map(\.rawValue)

  /// True when Apple signed another refund, revocation or reversal of the transaction after this
  /// notification: its late delivery (Apple retries for 72 hours; history recovery re-delivers)
  /// must not undo that later word, applied already or still to come.
  private func superseded(refundOf transaction: VerifiedTransaction) async throws -> Bool {
    try await RefundHistory.superseded(
      uuid, types: Self.refundTypes, key: .transaction(transaction.transactionId), on: tx)
  }

  /// The order a known transaction paid, locked; `known` is false for a transaction never seen.
  /// `FOR NO KEY UPDATE` (`OrderRepository.findForRefund`): the user's lock comes after it.
  func lockedOrder(_ transactionId: String) async throws -> (known: Bool, order: Order?) {
    let (known, tradeNo) = try await TransactionRecord.lock(transactionId, on: tx)
    guard let tradeNo else { return (known, nil) }
    return (true, try await orders.findForRefund(tradeNo, on: tx))
  }

  func revoke(
    _ transaction: VerifiedTransaction, reason: OrderEventReason, notice: [String: JSONValue]
  ) async throws -> NotificationOutcome {
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known else { return .deferred(.transactionUnknown) }
    try await TransactionRecord.setRevocation(
      transaction.transactionId, atMs: transaction.revocationDate ?? clock.milliseconds,
      reason: transaction.revocationReason, on: tx)
    // Known but not yet anyone's (a legacy receipt posted without a user): wait, like an
    // unknown transaction, until settlement gives it an order; then the refund applies.
    guard let order else { return .deferred(.transactionHasNoOrder) }
    guard
      let transition = try? OrderStateMachine.transition(
        from: order.tradeStatus, closeReason: order.closeReason, on: reason)
    else { return .processed(.alreadyClosed) }
    var refunded = notice
    refunded["trade_no"] = .string(order.tradeNo)
    refunded["revocation_date"] = EventTime.value(
      ms: transaction.revocationDate ?? clock.milliseconds)
    refunded["revocation_reason"] = transaction.revocationReason.map { .number(String($0)) }
    let policy = settlement.refundPolicy
    let recovery = try await RefundRecovery.plan(
      order.tradeNo, userId: order.userId, on: tx, outbox: outbox)
    if !recovery.isEmpty { refunded["recovery"] = RefundRecovery.json(recovery, policy: policy) }
    try await orders.transition(
      .order(order.tradeNo), transition, cause: cause, detail: detail,
      effects: [Ledger.refund(transactionId: transaction.transactionId, policy: policy)],
      events: [EventDraft(.purchaseRefunded, refunded.filter { $0.value != .null })], on: tx)
    return .processed(reason == .revoked ? .revoked : .refunded)
  }

  func reinstate(_ transaction: VerifiedTransaction, notice: [String: JSONValue])
    async throws -> NotificationOutcome
  {
    let (known, order) = try await lockedOrder(transaction.transactionId)
    guard known else {
      try await DeferredNotifications.wakeRenewalsHeldForRefund(transaction.transactionId, on: tx)
      return .deferred(.transactionUnknown)
    }
    try await TransactionRecord.setRevocation(
      transaction.transactionId, atMs: nil, reason: nil, on: tx)
    guard let order else { return .deferred(.transactionHasNoOrder) }
    guard
      let transition = try? OrderStateMachine.transition(
        from: order.tradeStatus, closeReason: order.closeReason, on: .refundReversed)
    else {
      // A paid order may still have had prorated shares taken back.
      guard order.tradeStatus == .tradeSuccess,
        try await reverseProratedRefunds(order, transaction, notice: notice)
      else { return .processed(.notRefunded) }
      return .processed(.refundReversed)
    }
    var reversed = notice
    reversed["trade_no"] = .string(order.tradeNo)
    // What the refund left owed is owed no more, even when the reversal gives nothing back
    // (the refund found its lot spent): first, so the reversal's credit repays no part of it.
    // The user's lock comes before the debt rows, as on every path that touches them (a
    // credit's trigger takes it, then repays debts): in the other order a reversal and a
    // credit to the same user deadlock (ledger.sql).
    try await outbox.lock([order.userId], on: tx)
    try await Ledger.cancelDebts(tradeNo: order.tradeNo, on: tx)
    // The reversal gives back what every refund of the order took, prorated shares before the
    // full refund included: none of them stands, so a later prorated refund takes its whole
    // share again.
    try await tx.execute(
      """
      UPDATE apple_transactions SET refunded_milliunits = 0, prorated_refunded_at = NULL
      WHERE transaction_id = \(transaction.transactionId) AND refunded_milliunits > 0
      """)
    try await change(
      order, transition, ledger: .refundReversed, transactionId: transaction.transactionId,
      events: [EventDraft(.purchaseRefundReversed, reversed)])
    return .processed(.refundReversed)
  }

  private func change(
    _ order: Order, _ transition: OrderTransition, ledger kind: LedgerKind, transactionId: String,
    events: [EventDraft]
  ) async throws {
    try await orders.transition(
      .order(order.tradeNo), transition, cause: cause, detail: detail,
      effects: [Ledger.reverse(kind, transactionId: transactionId)], events: events, on: tx)
  }

  /// A renewal nobody reported still counts: it is recorded, and settles an order of its own
  /// for the user who owns the original transaction. So does one recorded without an owner
  /// (another user posted it first and was told `not_yours`): its row says nothing about the
  /// subscriber, so only this notification can credit the period to them.
  func renew(
    _ transaction: VerifiedTransaction, events: [EventDraft], notice: [String: JSONValue],
    subscriberChose: Bool = false
  ) async throws -> NotificationOutcome {
    let (known, owned) = try await TransactionRecord.lock(transaction.transactionId, on: tx)
    if known { try await TransactionRecord.updateExpiry(transaction, onlyLater: true, on: tx) }
    // A renewal Apple signed before the subscription's later billing problem or expiry (a
    // retry delivering it late) still paid its period, but the state is that later word's: set
    // active now, it would end a grace period or a billing retry the later one began.
    let stale = try await RefundHistory.superseded(
      uuid, types: Self.subscriptionStateTypes,
      key: .subscription(transaction.originalTransactionId), on: tx)
    // Someone's already, or a first purchase kept without an owner (only its order's token or
    // an admin transfer may claim that): this notification only confirms its dates.
    if known, owned != nil || transaction.transactionId == transaction.originalTransactionId {
      if !stale {
        try await subscriptionState(transaction.originalTransactionId, .active, graceMs: nil)
      }
      // A period the reconcile pass recorded (its DID_RENEW lost, then delivered after all) was
      // announced by the repair: one `subscription.renewed` per period, whichever came first.
      var events = events
      if events.contains(where: { $0.type == .subscriptionRenewed }),
        try await renewalRepaired(transaction)
      {
        events.removeAll { $0.type == .subscriptionRenewed }
      }
      try await outbox.append(
        events, forSubscription: transaction.originalTransactionId, cause: notice, on: tx)
      return .processed(.datesUpdated)
    }
    // A renewal Apple refunded before anyone reported it: its refund waits deferred, so this
    // must not credit the period (settling would refuse it anyway, after making an order).
    if try await RefundHistory.revocation(transaction.transactionId, on: tx) != nil {
      return .processed(.superseded)
    }
    guard
      let userId = try await TransactionRecord.subscriber(
        originalTransactionId: transaction.originalTransactionId, on: tx)
    else {
      if !known, let outcome = try await payNamedOrder(transaction, events: events, stale: stale) {
        return outcome
      }
      return .deferred(.originalTransactionUnknown)
    }
    guard let product = try await catalog.product(transaction.productId, on: tx) else {
      return .processed(.unknownProduct)
    }
    // Bought in the app (an upgrade, a resubscription) with an order of the subscriber's own
    // whose token it carries (or, tokenless, that Apple says they chose), and that order's
    // report not here yet: this pays that order, so
    // the report that follows finds it settled instead of its purchase taken by a renewal.
    if let named = try await settlement.appOrder(
      paying: transaction, for: userId, product: product, subscriberChose: subscriberChose,
      on: tx)
    {
      if known { try await TransactionRecord.assign(transaction.transactionId, to: named, on: tx) }
      if !stale {
        try await subscriptionState(transaction.originalTransactionId, .active, graceMs: nil)
      }
      do {
        _ = try await settlement.settleLocked(
          named, product: product, transaction: transaction, source: source, cause: cause,
          record: nil, events: events, appleRevoked: false, on: tx)
        return .processed(.renewalRecorded)
      } catch SettlementRefusal.transactionAlreadyUsed where !known {
        throw NotificationLostRace(transactionId: transaction.transactionId)
      } catch is SettlementRefusal {
        // Closed for good, or paid meanwhile: the period is the subscriber's all the same.
      }
    }
    guard
      let order = try await orders.createForPurchase(
        userId: userId, productId: product.productId, quantity: 1, origin: .renewal,
        reason: .createdForRenewal, cause: cause, detail: detail,
        storefront: transaction.storefront, on: tx)
    else { return .processed(.unknownProduct) }
    // The row's lock is held since `lock` above, so a post of the same renewal waits and then
    // finds it owned: it is handed over once. `claim` would refuse an unowned row that carries
    // no token of this new order.
    if known { try await TransactionRecord.assign(transaction.transactionId, to: order, on: tx) }
    // Active before settling, so the state the settlement's events record is the final one.
    if !stale {
      try await subscriptionState(transaction.originalTransactionId, .active, graceMs: nil)
    }
    do {
      _ = try await settlement.settleLocked(
        order, product: product, transaction: transaction, source: source,
        cause: cause, record: nil, events: events, appleRevoked: false, on: tx)
    } catch SettlementRefusal.transactionAlreadyUsed where !known {
      // Unrecorded when locked (nothing to lock), then claimed by the app's own post of it.
      throw NotificationLostRace(transactionId: transaction.transactionId)
    }
    return .processed(.renewalRecorded)
  }

  /// Whether a reconcile repair recorded the period (and announced it): the only other writer
  /// of a known period's `subscription.renewed`. Read by the subscription's repairs
  /// (`reconcile_repairs_original`), a handful, never the owner's whole feed.
  private func renewalRepaired(_ transaction: VerifiedTransaction) async throws -> Bool {
    try await !tx.query(
      """
      SELECT 1 FROM reconcile_repairs
      WHERE original_transaction_id = \(transaction.originalTransactionId)
        AND transaction_id = \(transaction.transactionId) AND kind = 'renewed'
      LIMIT 1
      """
    ).isEmpty
  }

  /// A period of a subscription nobody owns yet (its first purchase, whose report has not come)
  /// that carries the token of an order it can pay: the notification pays that order, as
  /// ONE_TIME_CHARGE does, so the subscriber has access without the app. Nil when no such
  /// order is named: the notification waits for the report that makes the purchase known.
  private func payNamedOrder(
    _ transaction: VerifiedTransaction, events: [EventDraft], stale: Bool
  ) async throws -> NotificationOutcome? {
    guard let token = TransactionRecord.validToken(transaction.appAccountToken),
      let order = try await orders.find(
        accountToken: token, store: .appStore, lock: true, on: tx),
      let product = try await catalog.product(transaction.productId, on: tx),
      (try? OrderPayment.checkReopenable(order)) != nil,
      (try? TransactionMatcher.match(order, in: [transaction], usedElsewhere: [])) != nil
    else { return nil }
    if !stale {
      try await subscriptionState(transaction.originalTransactionId, .active, graceMs: nil)
    }
    do {
      _ = try await settlement.settleLocked(
        order, product: product, transaction: transaction, source: source, cause: cause,
        record: nil, events: events, appleRevoked: false, on: tx)
    } catch SettlementRefusal.transactionAlreadyUsed {
      // Unrecorded when read, then claimed by the app's own report of it.
      throw NotificationLostRace(transactionId: transaction.transactionId)
    } catch is SettlementRefusal {
      // Closed for good: the report, if it comes, is judged as any other.
      return nil
    }
    return .processed(.renewalRecorded)
  }

  /// Marks the subscription's chart unit changed for the rollup's next pass. The charts'
  /// periods read every stored DID_FAIL_TO_RENEW, EXPIRED and GRACE_PERIOD_EXPIRED, applied or
  /// superseded (`chart_apple_grace_end`), but the pass finds changed units only by the
  /// `chart_xid` of the rows it reads, which a superseded one writes none of: an update of its
  /// state (or, without one, of its latest transaction) stamps it, through the trigger.
  func markChartUnitChanged(_ original: String) async throws {
    try await tx.execute(
      """
      WITH state AS (
        UPDATE subscription_states SET chart_xid = pg_current_xact_id()
        WHERE original_transaction_id = \(original) RETURNING 1
      )
      UPDATE apple_transactions SET chart_xid = pg_current_xact_id()
      WHERE transaction_id = (
          SELECT transaction_id FROM apple_transactions WHERE original_transaction_id = \(original)
          ORDER BY purchase_date DESC, transaction_id DESC LIMIT 1)
        AND NOT EXISTS (SELECT FROM state)
      """)
  }

  /// Sets the subscription's state and grace end. A state without a grace of its own that is
  /// not a renewal (expired, billing retry) keeps the grace period granted before it, ended by
  /// `endedAtMs` at the latest (Apple's signing of the notification; now without one): the
  /// days spent in grace stay in the subscription's history (charts count them active), and
  /// access ends. A renewal's new period is the latest, which an earlier grace never extends.
  /// Returns whether the state changed (its status, or its grace period's end): the events a
  /// state writes (`subscription.billing_problem`, `subscription.expired`) are written once per
  /// state, whichever of a notification and a reconciliation repair records it first.
  @discardableResult
  func subscriptionState(
    _ original: String, _ status: SubscriptionStatus, graceMs: Int64?, endedAtMs: Int64? = nil
  ) async throws -> Bool {
    // Locked and read first: a FOR UPDATE in the upsert's own WITH skips the row that
    // statement changes, and would take every state for a new one.
    let was = try await tx.query(
      """
      SELECT status, grace_expires_at::text AS grace FROM subscription_states
      WHERE original_transaction_id = \(original) FOR UPDATE
      """
    ).first
    var query: PostgresQuery = """
      INSERT INTO subscription_states (original_transaction_id, status, grace_expires_at)
      VALUES (\(original), \(status),
      """
    query.append(TransactionRecord.time(graceMs))
    query.append(
      """
      ) ON CONFLICT (original_transaction_id) DO UPDATE
        SET status = EXCLUDED.status, updated_at = now(),
          grace_expires_at = CASE
            -- least() skips NULL: without a grace before, there is none to keep.
            WHEN EXCLUDED.grace_expires_at IS NULL AND EXCLUDED.status <> \(SubscriptionStatus.active)
              AND subscription_states.grace_expires_at IS NOT NULL
              THEN least(subscription_states.grace_expires_at,
      """)
    query.append(endedAtMs.map { TransactionRecord.time($0) } ?? "now()")
    query.append(
      """
      )
            ELSE EXCLUDED.grace_expires_at END
      RETURNING status, grace_expires_at::text AS grace
      """)
    let now = try await tx.query(query).first
    guard let was, let now else { return true }
    return try was.decodeIfPresent("status", as: String.self)
      != now.decodeIfPresent("status", as: String.self)
      || was.decodeIfPresent("grace", as: String.self)
        != now.decodeIfPresent("grace", as: String.self)
  }

  /// What every event of a notification says about it: which notification, and the purchase
  /// it is about.
  static func notice(
    _ stored: StoredNotification, uuid: String, transaction: VerifiedTransaction?,
    original: String?
  ) -> [String: JSONValue] {
    var fields: [String: JSONValue] = [
      "notification_uuid": .string(uuid),
      "notification_type": .string(stored.notification.notificationType),
    ]
    if let subtype = stored.notification.subtype { fields["subtype"] = .string(subtype) }
    if let original { fields["original_transaction_id"] = .string(original) }
    if let transaction {
      fields.merge(period(transaction)) { $1 }
    } else if let product = stored.renewalInfo?.productId {
      fields["product_id"] = .string(product)
    }
    return fields
  }

  /// What names a period in an event: its transaction, product and end.
  static func period(_ transaction: VerifiedTransaction) -> [String: JSONValue] {
    var fields: [String: JSONValue] = [
      "transaction_id": .string(transaction.transactionId),
      "product_id": .string(transaction.productId),
    ]
    if let expires = transaction.expiresDate { fields["expires_at"] = EventTime.value(ms: expires) }
    return fields
  }
}
