import Foundation
import GooglePlay
import Postgres

/// Google's refunds, per order as Google makes them (docs/GOOGLE_PLAY.md, "Refunds and
/// revocations"): a voided purchase names the order it refunds (`orderId`: the first order or a
/// renewal's), and may refund only part of a multi-quantity purchase (`voidedQuantity`); a
/// revocation (`SUBSCRIPTION_REVOKED`, as `purchases.subscriptions.revoke` makes it) refunds the
/// subscription's latest order and ends its access. Each refund closes the order it names as
/// refunded (a partial one leaves it paid), takes back that order's share of the credit under
/// `REFUND_POLICY`, and writes `purchase.refunded`; each entry of the voided list is applied
/// once (`google_voids`), whether a push or the sweep brings it.
extension GoogleNotificationService {
  /// A void or revocation, confirmed by Google before anything is taken back: a void must be
  /// in `voidedpurchases.list` (the last 29 days, subscriptions included), a revocation must
  /// show the subscription expired and its latest order in that list.
  func voided(_ token: String, _ purchase: Known, revocation: Bool = false) async throws -> Outcome
  {
    let entries: [VoidedPurchase]
    var revokedOrder: String?
    do {
      if revocation {
        let answer = try await client.subscriptionPurchase(token: token)
        guard answer.subscriptionStateValue == .expired else {
          return .done(.ignored, "not_revoked_at_google")
        }
        let googleId = purchase.product.draft.effectiveGoogleProductId
        let item =
          answer.lineItems?.first(where: { $0.productId == googleId }) ?? answer.lineItems?.first
        revokedOrder = item?.latestSuccessfulOrderId.flatMap { $0.isEmpty ? nil : $0 }
        // Expired is also how a subscription that simply ran out reads: a revocation is
        // believed when Google lists the refund it makes (the latest order voided), as a void
        // is, so a push of the type alone takes nothing back. A listing that comes later is
        // applied by the voided sweep.
        let listed = try await client.allVoidedPurchases(
          startTimeMillis: clock.milliseconds - 29 * 86_400_000, maxPages: 20
        ).filter { $0.purchaseToken == token }
        guard listed.contains(where: { revokedOrder == nil || $0.orderId == revokedOrder }) else {
          return .done(.ignored, "not_revoked_at_google")
        }
        entries = []
      } else {
        entries = try await client.allVoidedPurchases(
          startTimeMillis: clock.milliseconds - 29 * 86_400_000, maxPages: 20
        ).filter { $0.purchaseToken == token }
        guard !entries.isEmpty else { return .done(.ignored, "not_voided_at_google") }
      }
    } catch {
      return outcome(of: error)
    }
    monitor.resolved()
    if revocation {
      let result = try await database.withTransaction { tx in
        try await refund(
          token, purchase, orderId: revokedOrder, units: nil, revocation: true, on: tx)
      }
      return .done(.processed, result)
    }
    var results: [String] = []
    do {
      for entry in entries.sorted(by: { ($0.voidedTimeMillis ?? 0) < ($1.voidedTimeMillis ?? 0) }) {
        results.append(try await applyVoid(entry, token: token, purchase))
      }
    } catch let failure as GooglePlayFailure {
      // Google could not say whether a later period was paid: the push comes back, and the
      // entries applied so far are not applied again (`google_voids`).
      return outcome(of: failure)
    }
    return .done(.processed, Self.summary(results))
  }

  /// One entry of the voided list, once. Throws `GooglePlayFailure`, applying nothing, when
  /// the entry refunds a subscription's order and Google cannot say whether a later one was
  /// paid (`googlePaidLater`).
  func applyVoid(_ entry: VoidedPurchase, token: String, _ purchase: Known) async throws
    -> String
  {
    let orderId = entry.orderId.flatMap { $0.isEmpty ? nil : $0 } ?? purchase.orderId
    var paidLater = false
    if purchase.kind == .subscription,
      try await database.query(
        """
        SELECT 1 FROM google_voids
        WHERE order_id = \(orderId) AND voided_time_ms = \(entry.voidedTimeMillis ?? 0)
        """
      ).isEmpty
    {
      paidLater = try await googlePaidLater(than: orderId, token: token, purchase)
    }
    return try await database.withTransaction { tx in
      guard
        try await !tx.query(
          """
          INSERT INTO google_voids (order_id, voided_time_ms, purchase_token, voided_quantity,
            result)
          VALUES (\(orderId), \(entry.voidedTimeMillis ?? 0), \(token),
            \(entry.voidedQuantity.map { Int64($0) }), 'applying')
          ON CONFLICT DO NOTHING RETURNING 1
          """
        ).isEmpty
      else { return "already_applied" }
      let result = try await refund(
        token, purchase, orderId: orderId, units: entry.voidedQuantity, revocation: false,
        paidLater: paidLater, on: tx)
      try await tx.execute(
        """
        UPDATE google_voids SET result = \(result)
        WHERE order_id = \(orderId) AND voided_time_ms = \(entry.voidedTimeMillis ?? 0)
        """)
      return result
    }
  }

  /// Whether Google names a paid order of the subscription later than `orderId`: a renewal
  /// Storekeeper has not recorded yet (its push lost, or still queued behind the void), which
  /// the void of an earlier period must not end. While Google cannot answer for now (no
  /// answer, 429, 5xx, credentials it refuses) the void waits (the error is thrown): taken for
  /// the latest, the refunded order would revoke the subscription for good, and the paid
  /// renewal's own read-back could never undo it. An answer that will never come (404, 410,
  /// another 4xx) leaves the latest recorded order to stand for the latest, as waiting for it
  /// would hold up every later void of the sweep.
  private func googlePaidLater(than orderId: String, token: String, _ purchase: Known)
    async throws(GooglePlayFailure) -> Bool
  {
    let answer: SubscriptionPurchaseV2
    do {
      answer = try await client.subscriptionPurchase(token: token)
    } catch {
      switch error {
      case .retryable, .credentialsRefused:
        logger.notice(
          "a void waits: Google could not say the latest order of its subscription",
          ["order": .string(orderId), "error": .string(GooglePurchaseVerifier.describe(error))])
        throw error
      case .unknownToken, .badRequest, .unexpected:
        logger.notice(
          "a void is applied without Google's latest order of its subscription",
          ["order": .string(orderId), "error": .string(GooglePurchaseVerifier.describe(error))])
        return false
      }
    }
    let googleId = purchase.product.draft.effectiveGoogleProductId
    let item =
      answer.lineItems?.first(where: { $0.productId == googleId }) ?? answer.lineItems?.first
    guard let latest = item?.latestSuccessfulOrderId, !latest.isEmpty else { return false }
    return GoogleOrderNumber.precedes(orderId, anyOf: [latest])
  }

  /// Refunds order `orderId` of the purchase (its latest when nil): `units` of a multi-quantity
  /// one-time purchase, or all of it. `paidLater`: Google names a later paid order of the
  /// subscription, so the refunded one is not its last, whatever Storekeeper has recorded.
  func refund(
    _ token: String, _ purchase: Known, orderId: String?, units: Int32?, revocation: Bool,
    paidLater: Bool = false, on tx: PostgresTransaction
  ) async throws -> String {
    guard
      let row = try await tx.query(
        """
        SELECT gp.kind, gp.quantity, gp.refunded_quantity,
          coalesce(\(orderId)::text,
                   (SELECT o.order_id FROM google_orders o WHERE o.purchase_token = gp.purchase_token
                    ORDER BY o.purchased_at DESC, o.order_id DESC LIMIT 1),
                   gp.order_id) AS order_id
        FROM google_purchases gp WHERE gp.purchase_token = \(token) FOR UPDATE
        """
      ).first
    else { return "unknown_token" }
    var refundedOrder: String = try row.decode("order_id")
    let quantity: Int32 = try row.decode("quantity")
    let left = quantity - (try row.decode("refunded_quantity", as: Int32.self))
    let kind: GooglePurchase.Kind = try row.decode("kind")
    if kind == .subscription, let orderId {
      // A period Storekeeper never recorded, numbered before one it did (the app reported after
      // a renewal, or a renewal's push was lost and a later one came), paid for nothing here:
      // the access the later orders bought stays, as Google keeps it.
      let known = try await tx.query(
        "SELECT order_id FROM google_orders WHERE purchase_token = \(token)"
      ).map { try $0.decode("order_id", as: String.self) }
      if !known.contains(orderId), GoogleOrderNumber.precedes(orderId, anyOf: known) {
        return "not_credited"
      }
      // Nor does one never recorded that Google follows with a later paid period (its push
      // lost): the subscription goes on, and no order recorded here is the one refunded.
      if !known.contains(orderId), paidLater { return "not_credited" }
    }
    // The order named, or, when Storekeeper never saw it (its renewal's push was lost), the
    // latest order it knows of the purchase: that is the period the refund ends.
    let order = try await tx.query(
      """
      SELECT o.order_id, o.trade_no, NOT EXISTS (
          SELECT 1 FROM google_orders later WHERE later.purchase_token = o.purchase_token
            AND (later.purchased_at, later.order_id) > (o.purchased_at, o.order_id)) AS latest
      FROM google_orders o WHERE o.purchase_token = \(token)
      ORDER BY o.order_id = \(refundedOrder) DESC, o.purchased_at DESC, o.order_id DESC LIMIT 1
      """
    ).first
    if let order { refundedOrder = try order.decode("order_id") }
    let tradeNo = try order?.decodeIfPresent("trade_no", as: String.self) ?? purchase.tradeNo
    // The purchase ends with its latest order refunded; an earlier renewal refunded alone
    // leaves the subscription as Google keeps it.
    let latest = try (order?.decode("latest", as: Bool.self) ?? true) && !paidLater
    if kind == .product, let units, units > 0, units < left {
      return try await partialRefund(
        token, tradeNo: tradeNo, orderId: refundedOrder, units: units, quantity: quantity,
        on: tx)
    }
    if latest {
      try await tx.execute(
        """
        UPDATE google_purchases SET revoked_at = coalesce(revoked_at, now()),
          refunded_quantity = CASE WHEN kind = 'product' THEN quantity ELSE refunded_quantity END,
          updated_at = now()
        WHERE purchase_token = \(token)
        """)
    }
    guard let found = try await orders.findForRefund(tradeNo, on: tx),
      let transition = try? OrderStateMachine.transition(
        from: found.tradeStatus, closeReason: found.closeReason, on: .refunded)
    else { return "already_closed" }
    // A subscription's orders each paid for one period; a one-time purchase's what is left,
    // of the units the order was credited for (fewer than the purchase's when an admin moved
    // it after a partial refund).
    let share = kind == .product ? max(left, 0) : 1
    let whole = kind == .product ? found.quantity : 1
    var notice: [String: JSONValue] = [
      "store": .string(OrderStore.googlePlay.rawValue), "trade_no": .string(found.tradeNo),
      "transaction_id": .string(found.transactionId ?? refundedOrder),
      "product_id": .string(found.productId), "refund_type": .string("full"),
    ]
    if kind == .product, share < quantity {
      notice["refunded_quantity"] = .number(String(share))
      notice["quantity"] = .number(String(quantity))
    }
    let recovery = try await RefundRecovery.planShare(
      found.tradeNo, .units(share, of: whole), userId: found.userId, on: tx,
      outbox: orders.outbox)
    if !recovery.isEmpty {
      notice["recovery"] = RefundRecovery.json(recovery, policy: refundPolicy)
    }
    var effects: [PostgresQuery] = [
      Ledger.refundShare(
        tradeNo: found.tradeNo, .units(share, of: whole),
        transactionId: found.transactionId ?? refundedOrder, policy: refundPolicy),
      """
      UPDATE google_orders SET refunded_at = coalesce(refunded_at, now())
      WHERE order_id = \(refundedOrder)
      """,
    ]
    if latest {
      // Nothing left to acknowledge: Google took the purchase back.
      effects.append(
        """
        UPDATE google_acknowledgements SET done_at = now(), last_error = 'voided'
        WHERE purchase_token = \(token) AND done_at IS NULL
        """)
    }
    try await orders.transition(
      .order(found.tradeNo), transition, cause: .notification, detail: .object(notice),
      effects: effects, events: [EventDraft(.purchaseRefunded, notice)], on: tx)
    // The refunded order may be a period an admin transferred the purchase away after (a
    // renewal charged to the old owner): the access that ends is the current owner's, and their
    // events must say so, as a replaced purchase's owner's do.
    if latest {
      for owner in try await tx.query(
        """
        SELECT user_id FROM google_purchases
        WHERE purchase_token = \(token) AND user_id IS NOT NULL AND user_id <> \(found.userId)
        """)
      {
        try await orders.outbox.append([], for: try owner.decode("user_id"), cause: notice, on: tx)
      }
    }
    return revocation ? "revoked" : "refunded"
  }

  /// A quantity-based partial refund: `units` of the purchase's `quantity` taken back; the
  /// order stays paid for the rest.
  private func partialRefund(
    _ token: String, tradeNo: String, orderId: String, units: Int32, quantity: Int32,
    on tx: PostgresTransaction
  ) async throws -> String {
    guard let found = try await orders.findForRefund(tradeNo, on: tx),
      found.tradeStatus == .tradeSuccess
    else { return "already_closed" }
    // A share of the units the order was credited for: fewer than the purchase's when an admin
    // moved what a partial refund left.
    let recovery = try await RefundRecovery.planShare(
      tradeNo, .units(units, of: found.quantity), userId: found.userId, on: tx,
      outbox: orders.outbox)
    try await tx.execute(
      Ledger.refundShare(
        tradeNo: tradeNo, .units(units, of: found.quantity),
        transactionId: found.transactionId ?? orderId, policy: refundPolicy))
    try await tx.execute(
      """
      UPDATE google_purchases SET refunded_quantity = refunded_quantity + \(units)::integer,
        updated_at = now()
      WHERE purchase_token = \(token)
      """)
    var notice: [String: JSONValue] = [
      "store": .string(OrderStore.googlePlay.rawValue), "trade_no": .string(tradeNo),
      "transaction_id": .string(found.transactionId ?? orderId),
      "product_id": .string(found.productId), "refund_type": .string("partial"),
      "refunded_quantity": .number(String(units)), "quantity": .number(String(quantity)),
    ]
    if !recovery.isEmpty {
      notice["recovery"] = RefundRecovery.json(recovery, policy: refundPolicy)
    }
    try await orders.outbox.append(
      [EventDraft(.purchaseRefunded, notice)], for: found.userId, cause: notice, on: tx)
    return "partial_refund"
  }

  /// One word for what a push's entries did, the most telling first.
  static func summary(_ results: [String]) -> String {
    for word in ["refunded", "partial_refund", "already_closed", "already_applied"]
    where results.contains(word) {
      return word
    }
    return results.first ?? "nothing"
  }
}
