import Postgres
import StorekeeperLogging

/// Settles orders with Google Play purchases on the same orders, ledger and events as Apple's,
/// exactly once: one statement claims the purchase token (`google_purchases`), moves the order,
/// writes its event, credits the ledger, settles the order's reports and queues the
/// acknowledgement Google needs within three days (`google_acknowledgements`).
package struct GoogleSettlement: Sendable {
  let database: PostgresPool
  let orders: OrderRepository
  let reports: ReportStore
  package let verifier: GooglePurchaseVerifier
  let catalog: CatalogRepository
  let entitlements: EntitlementRepository
  /// `SANDBOX_POLICY`: whether a license tester's purchase credits balances.
  var sandboxCredits: Bool
  /// Called after a commit that queued an acknowledgement, so the worker takes it at once.
  let credited: @Sendable () -> Void
  /// Applies what Google now says of a known subscription (`GoogleNotificationService.readBack`)
  /// before a restore or a repeated report is answered.
  let readBack: @Sendable (String) async -> Void

  package init(
    database: PostgresPool, orders: OrderRepository, reports: ReportStore,
    verifier: GooglePurchaseVerifier, catalog: CatalogRepository,
    entitlements: EntitlementRepository, sandboxCredits: Bool,
    credited: @escaping @Sendable () -> Void,
    readBack: @escaping @Sendable (String) async -> Void = { _ in }
  ) {
    self.readBack = readBack
    self.database = database
    self.orders = orders
    self.reports = reports
    self.verifier = verifier
    self.catalog = catalog
    self.entitlements = entitlements
    self.sandboxCredits = sandboxCredits
    self.credited = credited
  }

  /// Whether `purchase`, verified at Google as a purchase of `product`, may pay `order`: the
  /// App Store's ownership rules, unchanged. The product bought is the product ordered (a
  /// restore finds its order by account id, and a cheap purchase must not pay a dear order); a
  /// purchase carrying an obfuscated account id pays only the order that id names; one carrying
  /// none pays the first order to claim it. The quantity is the purchase's, not the order's
  /// (`resizedQuantity`): the user chose it in Google's purchase screen.
  static func check(_ purchase: GooglePurchase, of product: Product, pays order: Order)
    throws(SettlementRefusal)
  {
    guard order.store == .googlePlay else {
      throw .storeMismatch(ordered: order.store.rawValue)
    }
    guard product.productId == order.productId else {
      throw .productMismatch(paidFor: [product.productId], ordered: order.productId)
    }
    if let id = purchase.obfuscatedAccountId, id.lowercased() != order.appAccountToken {
      throw .accountTokenMismatch
    }
    _ = try resizedQuantity(order, to: purchase, product: product)
  }

  /// Settles order `tradeNo` with `purchase`, or throws the `SettlementRefusal` that says why
  /// it cannot.
  package func settle(
    _ tradeNo: String, product: Product, purchase: GooglePurchase, record: ReportStore.Record?,
    cause: OrderEventCause
  ) async throws -> SettledOrder {
    let settled: SettledOrder
    do {
      settled = try await database.withTransaction { tx in
        guard let order = try await orders.find(tradeNo, lock: true, on: tx) else {
          throw SettlementRefusal.orderNotFound(tradeNo: tradeNo)
        }
        try OrderPayment.checkReopenable(order)
        if order.tradeStatus != .tradeSuccess || order.transactionId != purchase.orderId {
          try Self.check(purchase, of: product, pays: order)
        }
        return try await settleLocked(
          order, product: product, purchase: purchase, cause: cause, record: record, on: tx)
      }
    } catch {
      alertIfUncreditable(error, purchase, tradeNo: tradeNo)
      throw error
    }
    credited()
    if product.type == .autoRenewable, !settled.delivery.newlyGranted {
      // Told again, or a later period of it: what Google now says is applied (a renewal whose
      // push was lost pays its order), as a restore applies it.
      await readBack(purchase.token)
    }
    return settled
  }

  /// Settles an order `tx` has locked (or just created).
  func settleLocked(
    _ order: Order, product: Product, purchase: GooglePurchase, cause: OrderEventCause,
    record: ReportStore.Record?, events: [EventDraft] = [], paidAsOrder: String? = nil,
    on tx: PostgresTransaction
  ) async throws -> SettledOrder {
    if order.tradeStatus == .tradeSuccess {
      if let own = try await orderForSecondPurchase(purchase, of: order, cause: cause, on: tx) {
        // The report stored for the paid order is answered by this settlement.
        if case .stored(let id) = record {
          try await reports.finish(id, outcome: .settled, code: nil, on: tx)
        }
        let kept: ReportStore.Record? = if case .new = record { record } else { nil }
        return try await settleLocked(
          own, product: product, purchase: purchase, cause: cause, record: kept, events: events,
          on: tx)
      }
      let laterPeriod = try await isLaterPeriod(purchase, of: order, on: tx)
      try await OrderPayment.repeated(
        order, paidBy: laterPeriod ? order.transactionId ?? purchase.orderId : purchase.orderId,
        record: record, reports: reports, on: tx)
      return OrderPayment.delivery(
        order, product: product, newlyGranted: false, sandboxCredits: sandboxCredits)
    }
    let transition = try OrderPayment.transition(order)
    // An admin transfer's order is for the units no refund took back, on purpose.
    let resized =
      order.origin == .transfer
      ? nil : try Self.resizedQuantity(order, to: purchase, product: product)
    var effects = reports.settledEffects(record)
    if let credit = try OrderPayment.credit(
      product, purchaseId: purchase.orderId, environment: purchase.environment,
      sandboxCredits: sandboxCredits)
    {
      effects.append(credit)
    }
    effects.append(GoogleOrderRecord.first(purchase))
    if let acknowledge = GoogleAcknowledgementQueue.enqueue(purchase, product: product) {
      effects.append(acknowledge)
    }
    if let linked = purchase.linkedPurchaseToken, linked != purchase.token {
      // An upgrade, downgrade or re-signup: the purchase it replaces stops granting now.
      effects.append(
        """
        UPDATE google_purchases SET replaced_by = \(purchase.token), updated_at = now(),
          expiry_time = least(coalesce(expiry_time, now()), now())
        WHERE purchase_token = \(linked) AND replaced_by IS NULL
        """)
    }
    let changed = try await orders.transition(
      .order(order.tradeNo), transition, cause: cause,
      detail: .object([
        "store": .string(OrderStore.googlePlay.rawValue),
        "transaction_id": .string(purchase.orderId),
        "environment": .string(purchase.environment),
        "previous_close_reason": order.closeReason.map { .string($0.rawValue) } ?? .null,
        // The order's history says what the app ordered when Google's purchase resized it.
        "resized_from_quantity": resized == nil ? .null : .number(String(order.quantity)),
      ]),
      payment: .init(
        transactionId: purchase.orderId, environment: purchase.environment,
        paidAsOrder: paidAsOrder, quantity: resized),
      requires: GooglePurchaseRecord.claim(purchase, productId: product.productId, for: order),
      effects: effects, events: events, on: tx)
    guard let settled = changed.first else {
      throw SettlementRefusal.transactionAlreadyUsed(
        transactionId: purchase.orderId, productId: order.productId)
    }
    if let linked = purchase.linkedPurchaseToken, linked != purchase.token {
      // The purchase replaced may be another app user's (one Google account, two sign-ins):
      // their access ended with it, and their events say so, as a notification's would.
      for replaced in try await tx.query(
        """
        SELECT user_id FROM google_purchases
        WHERE purchase_token = \(linked) AND replaced_by = \(purchase.token)
          AND user_id IS NOT NULL AND user_id <> \(order.userId)
        """)
      {
        try await orders.outbox.append(
          [], for: try replaced.decode("user_id"),
          cause: ["replaced_by": .string(product.draft.effectiveGoogleProductId)], on: tx)
      }
    }
    return OrderPayment.delivery(
      settled, product: product, newlyGranted: true, sandboxCredits: sandboxCredits)
  }
}
