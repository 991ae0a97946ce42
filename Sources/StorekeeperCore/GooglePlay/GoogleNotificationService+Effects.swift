import Foundation
import GooglePlay
import Postgres

/// The effects of Google's notifications, each in one database transaction that holds the
/// purchase's row lock, so two instances applying pushes about one purchase take turns.
extension GoogleNotificationService {
  /// A void or revocation, confirmed by Google before anything is taken back: a void must be
  /// in `voidedpurchases.list` (the last 30 days, subscriptions included), a revocation must
  /// show the subscription expired. Then the order closes as refunded and its credit is
  /// reversed through the ledger; the purchase stops granting.
  func voided(_ token: String, _ purchase: Known, revocation: Bool = false) async throws -> Outcome
  {
    do {
      if revocation {
        let answer = try await client.subscriptionPurchase(token: token)
        guard answer.subscriptionStateValue == .expired else {
          return .done(.ignored, "not_revoked_at_google")
        }
      } else {
        let voided = try await client.allVoidedPurchases(
          startTimeMillis: clock.milliseconds - 29 * 86_400_000, maxPages: 20)
        guard let entry = voided.first(where: { $0.purchaseToken == token }) else {
          return .done(.ignored, "not_voided_at_google")
        }
        if let quantity = entry.voidedQuantity {
          // Part of a multi-quantity purchase: recorded for an admin to adjust; reversing the
          // whole credit would take back what the user still paid for.
          return .done(.processed, "partial_refund_of_\(quantity)_recorded")
        }
      }
    } catch {
      return outcome(of: error)
    }
    monitor.resolved()
    return try await revokeConfirmed(token, purchase, revocation: revocation)
  }

  /// Takes a purchase back that Google has confirmed voided or revoked: the order closes as
  /// refunded, the ledger reverses its credit, the purchase stops granting.
  func revokeConfirmed(_ token: String, _ purchase: Known, revocation: Bool) async throws
    -> Outcome
  {
    try await database.withTransaction { tx -> Outcome in
      try await tx.execute(
        """
        UPDATE google_purchases SET revoked_at = coalesce(revoked_at, now()), updated_at = now()
        WHERE purchase_token = \(token)
        """)
      guard let order = try await orders.find(purchase.tradeNo, lock: true, on: tx),
        let transition = try? OrderStateMachine.transition(
          from: order.tradeStatus, closeReason: order.closeReason, on: .refunded)
      else { return .done(.processed, "already_closed") }
      let notice: [String: JSONValue] = [
        "store": .string(OrderStore.googlePlay.rawValue), "trade_no": .string(order.tradeNo),
        "transaction_id": .string(order.transactionId ?? purchase.orderId),
        "product_id": .string(order.productId),
      ]
      try await orders.transition(
        .order(order.tradeNo), transition, cause: .notification, detail: .object(notice),
        effects: [
          Ledger.reverse(.refund, transactionId: order.transactionId ?? purchase.orderId),
          // Nothing left to acknowledge: Google took the purchase back.
          """
          UPDATE google_acknowledgements SET done_at = now(), last_error = 'voided'
          WHERE purchase_token = \(token) AND done_at IS NULL
          """,
        ], events: [EventDraft(.purchaseRefunded, notice)], on: tx)
      return .done(.processed, revocation ? "revoked" : "refunded")
    }
  }

  /// A subscription's state read back and applied: its expiry (the access policy: active, in
  /// grace and canceled-but-paid grant until Google's expiry; on hold, paused and expired grant
  /// nothing from now), a renewal paying an order of its own, and the purchase it replaced
  /// stopping to grant.
  func subscriptionChanged(_ token: String, _ purchase: Known) async throws -> Outcome {
    let answer: SubscriptionPurchaseV2
    do {
      answer = try await client.subscriptionPurchase(token: token)
    } catch {
      return outcome(of: error)
    }
    monitor.resolved()
    let googleId = purchase.product.draft.effectiveGoogleProductId
    guard
      let item = answer.lineItems?.first(where: { $0.productId == googleId })
        ?? answer.lineItems?.first
    else { return .done(.failed, "no_line_item") }
    let state = answer.subscriptionStateValue
    let nowMs = clock.milliseconds
    let expiryMs = item.expiryDate.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    let grants = Self.grantsAccess(state)
    let accessMs = grants ? expiryMs : expiryMs.map { min($0, nowMs) }
    return try await database.withTransaction { tx -> Outcome in
      guard
        let row = try await tx.query(
          """
          SELECT revoked_at IS NOT NULL AS revoked, replaced_by IS NOT NULL AS replaced
          FROM google_purchases WHERE purchase_token = \(token) FOR UPDATE
          """
        ).first
      else { return .done(.ignored, "unknown_token") }
      if try row.decode("revoked", as: Bool.self) { return .done(.processed, "revoked_earlier") }
      var update: PostgresQuery = "UPDATE google_purchases SET expiry_time = "
      if try row.decode("replaced", as: Bool.self) {
        // Replaced: it never grants again, whatever Google says of its own dates.
        update.append("least(expiry_time, ")
        update.append(TransactionRecord.time(accessMs))
        update.append(")")
      } else {
        update.append(TransactionRecord.time(accessMs))
      }
      update.append(
        ", state = \(answer.subscriptionState), updated_at = now() WHERE purchase_token = \(token)")
      try await tx.execute(update)
      let notice: [String: JSONValue] = [
        "store": .string(OrderStore.googlePlay.rawValue),
        "product_id": .string(purchase.product.productId),
        "state": .string(answer.subscriptionState ?? ""),
        "expires_at": expiryMs.map { EventTime.value(ms: $0) } ?? .null,
      ]
      var result = Self.result(state)
      if let latest = item.latestSuccessfulOrderId, !latest.isEmpty, latest != purchase.orderId,
        try await tx.query("SELECT 1 FROM orders WHERE transaction_id = \(latest)").isEmpty
      {
        try await renew(purchase, orderId: latest, notice: notice, on: tx)
        result = "renewed"
      } else {
        var events: [EventDraft] = []
        switch state {
        case .onHold, .inGracePeriod: events.append(EventDraft(.subscriptionBillingProblem, notice))
        case .expired: events.append(EventDraft(.subscriptionExpired, notice))
        default: break
        }
        try await orders.outbox.append(events, for: purchase.userId, cause: notice, on: tx)
      }
      if let linked = answer.linkedPurchaseToken, !linked.isEmpty, linked != token {
        for replaced in try await tx.query(
          """
          UPDATE google_purchases SET replaced_by = \(token), updated_at = now(),
            expiry_time = least(coalesce(expiry_time, now()), now())
          WHERE purchase_token = \(linked) AND replaced_by IS NULL AND user_id IS NOT NULL
          RETURNING user_id
          """)
        {
          try await orders.outbox.append(
            [], for: try replaced.decode("user_id"), cause: ["replaced_by": .string(googleId)],
            on: tx)
          result += "+replaced_linked"
        }
      }
      return .done(.processed, result)
    }
  }

  /// A renewal: an order of its own for the subscriber (`origin: renewal`), paid by Google's
  /// new order id, which `orders.transaction_id` holds once.
  private func renew(
    _ purchase: Known, orderId: String, notice: [String: JSONValue], on tx: PostgresTransaction
  ) async throws {
    guard
      let order = try await orders.createForPurchase(
        userId: purchase.userId, productId: purchase.product.productId, quantity: 1,
        origin: .renewal, reason: .createdForRenewal, cause: .notification,
        detail: .object(["store": .string(OrderStore.googlePlay.rawValue)]), store: .googlePlay,
        on: tx)
    else { return }
    let transition = try OrderStateMachine.transition(
      from: .waitBuyerPay, closeReason: nil, on: .paid)
    var renewed = notice
    renewed["transaction_id"] = .string(orderId)
    var effects: [PostgresQuery] = []
    if let credit = try Ledger.grant(
      purchase.product, transactionId: orderId, environment: purchase.environment)
    {
      effects.append(credit)
    }
    try await orders.transition(
      .order(order.tradeNo), transition, cause: .notification, detail: .object(renewed),
      payment: .init(transactionId: orderId, environment: purchase.environment),
      effects: effects, events: [EventDraft(.subscriptionRenewed, renewed)], on: tx)
  }

  /// The documented access policy (docs/GOOGLE_PLAY.md).
  static func grantsAccess(_ state: SubscriptionState?) -> Bool {
    switch state {
    case .active, .inGracePeriod, .canceled: true
    default: false
    }
  }

  static func result(_ state: SubscriptionState?) -> String {
    switch state {
    case .active: "active"
    case .inGracePeriod: "in_grace_period"
    case .onHold: "on_hold"
    case .paused: "paused"
    case .canceled: "canceled"
    case .expired: "expired"
    default: "state_updated"
    }
  }
}
