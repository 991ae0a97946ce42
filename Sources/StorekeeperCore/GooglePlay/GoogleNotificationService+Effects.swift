import Foundation
import GooglePlay
import Postgres

/// The effects of Google's notifications, each in one database transaction that holds the
/// purchase's row lock, so two instances applying pushes about one purchase take turns.
extension GoogleNotificationService {
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
          SELECT revoked_at IS NOT NULL AS revoked, replaced_by IS NOT NULL AS replaced,
            (extract(epoch FROM expiry_time) * 1000)::bigint AS expiry_ms,
            updated_at::text AS updated, state
          FROM google_purchases WHERE purchase_token = \(token) FOR UPDATE
          """
        ).first
      else { return .done(.ignored, "unknown_token") }
      if try row.decode("revoked", as: Bool.self) { return .done(.processed, "revoked_earlier") }
      // Changed while Google was asked (a transfer to another user, or another instance's
      // read-back applied first, which may be newer than this one): what was read is stale, so
      // the push is read back again rather than credit the old owner or move dates backwards.
      guard try row.decode("updated", as: String.self) == purchase.updatedAt else {
        return .retry(Self.changedMeanwhile)
      }
      // A renewal is charged when the period it follows ends (or now, after a lapse), until the
      // Orders API says when.
      let previousExpiryMs: Int64? = try row.decodeIfPresent("expiry_ms")
      let previousState: String? = try row.decodeIfPresent("state")
      let replaced = try row.decode("replaced", as: Bool.self)
      var update: PostgresQuery = "UPDATE google_purchases SET expiry_time = "
      if replaced {
        // Replaced: it never grants again, whatever Google says of its own dates.
        update.append("least(expiry_time, ")
        update.append(TransactionRecord.time(accessMs))
        update.append(")")
      } else {
        update.append(TransactionRecord.time(accessMs))
      }
      update.append(", state = \(answer.subscriptionState), ")
      update.append(GooglePurchaseRecord.recurringPrice(item.autoRenewingPlan?.recurringPrice))
      update.append(" updated_at = now() WHERE purchase_token = \(token)")
      try await tx.execute(update)
      let notice: [String: JSONValue] = [
        "store": .string(OrderStore.googlePlay.rawValue),
        "product_id": .string(purchase.product.productId),
        "state": .string(answer.subscriptionState ?? ""),
        "expires_at": expiryMs.map { EventTime.value(ms: $0) } ?? .null,
      ]
      var result = Self.result(state)
      var renewed = false
      if let latest = item.latestSuccessfulOrderId, !latest.isEmpty, latest != purchase.orderId,
        try await tx.query("SELECT 1 FROM orders WHERE transaction_id = \(latest)").isEmpty
      {
        let chargedAtMs = min(previousExpiryMs ?? nowMs, nowMs)
        let lost = try await lostRenewals(before: latest, token: token, on: tx)
        for (index, orderId) in lost.enumerated() {
          // Its own period's dates come with its price from the Orders API. Until then each is
          // a millisecond before the next, so the periods keep their order by time: "latest"
          // is the last charged, and ids would sort "..9" after "..10" as text.
          try await renew(
            purchase, token: token, orderId: orderId,
            chargedAtMs: chargedAtMs - Int64(lost.count - index), expiryMs: nil,
            notice: notice, on: tx)
        }
        try await renew(
          purchase, token: token, orderId: latest, chargedAtMs: chargedAtMs, expiryMs: expiryMs,
          notice: notice, on: tx)
        result = lost.isEmpty ? "renewed" : "renewed+\(lost.count)_lost"
        renewed = true
      }
      // Said once, when the state becomes one: the sweep reads every recent subscription again
      // each pass, and a push may repeat what is known. After any renewal the read-back
      // recorded too (a lost push's period may be followed by a failed charge); without one,
      // the user's state is derived again even when nothing is said (an expiry reached).
      // A purchase another replaced (an upgrade, a downgrade; Google reads it back expired or
      // canceled by the replacement) says nothing of its own: the subscriber did not lapse,
      // cancel or fail to pay, and the replacement's purchase tells what they have now.
      let replacement =
        replaced || answer.canceledStateContext?.replacementCancellation != nil
      let said =
        replacement || answer.subscriptionState == previousState
        ? []
        : Self.stateEvents(
          state, previous: previousState.flatMap(SubscriptionState.init(rawValue:)),
          userCanceled: answer.canceledStateContext.map { $0.userInitiatedCancellation != nil }
            ?? true, notice)
      if !renewed || !said.isEmpty {
        try await orders.outbox.append(said, for: purchase.userId, cause: notice, on: tx)
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

  /// Why a read-back is read again: the purchase changed while Google was asked.
  static let changedMeanwhile = "changed_meanwhile"

  /// The event a subscription's state is told by, in Apple's shape: a billing problem with
  /// `status` `grace_period` (access goes on until the grace period ends, Google's expiry now)
  /// or `billing_retry` (on hold), or its expiry; canceled (renewal turned off, access to the
  /// period's end), or live again after it, is `subscription.auto_renew_changed`.
  /// Only the subscriber's own cancellation is theirs to be told of: one Google, the developer
  /// or an upgrade made (`canceledStateContext`) is no choice of theirs to win back.
  static func stateEvents(
    _ state: SubscriptionState?, previous: SubscriptionState?, userCanceled: Bool,
    _ notice: [String: JSONValue]
  ) -> [EventDraft] {
    var problem = notice
    if state == .canceled && !userCanceled { return [] }
    if state == .canceled || (previous == .canceled && grantsAccess(state)) {
      var changed = notice
      changed["auto_renew"] = .bool(state != .canceled)
      return [EventDraft(.subscriptionAutoRenewChanged, changed)]
    }
    switch state {
    case .inGracePeriod:
      problem["status"] = .string("grace_period")
      problem["grace_expires_at"] = notice["expires_at"]
      return [EventDraft(.subscriptionBillingProblem, problem)]
    case .onHold:
      problem["status"] = .string("billing_retry")
      return [EventDraft(.subscriptionBillingProblem, problem)]
    case .expired: return [EventDraft(.subscriptionExpired, notice)]
    default: return []
    }
  }

  /// The renewals between the last order recorded for the purchase and `latest` whose pushes
  /// never came and no sweep read (Google names each period's order): each was charged, so each
  /// gets its order and credit as if its push had come. One Google voided meanwhile (its void
  /// recorded, applied to what Storekeeper knew then) is left out: it was paid back.
  private func lostRenewals(before latest: String, token: String, on tx: PostgresTransaction)
    async throws -> [String]
  {
    let recorded = try await tx.query(
      "SELECT order_id FROM google_orders WHERE purchase_token = \(token)"
    ).map { try $0.decode("order_id", as: String.self) }
    let missing = GoogleOrderNumber.missing(before: latest, recorded: recorded)
    if missing.isEmpty { return [] }
    let settled = try await tx.query(
      """
      SELECT transaction_id AS id FROM orders WHERE transaction_id = ANY (\(PostgresArray(missing)))
      UNION SELECT order_id FROM google_voids WHERE order_id = ANY (\(PostgresArray(missing)))
      """
    ).map { try $0.decode("id", as: String.self) }
    let lost = missing.filter { !settled.contains($0) }
    if !lost.isEmpty {
      logger.notice(
        "Google renewals whose pushes never came, credited now",
        ["orders": .string(lost.joined(separator: ",")), "latest": .string(latest)])
    }
    return lost
  }

  /// A renewal: an order of its own for the subscriber (`origin: renewal`), paid by Google's
  /// new order id, which `orders.transaction_id` holds once.
  private func renew(
    _ purchase: Known, token: String, orderId: String, chargedAtMs: Int64, expiryMs: Int64?,
    notice: [String: JSONValue], on tx: PostgresTransaction
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
    var effects: [PostgresQuery] = [
      GoogleOrderRecord.renewal(
        token: token, orderId: orderId, chargedAtMs: chargedAtMs, expiryMs: expiryMs)
    ]
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
