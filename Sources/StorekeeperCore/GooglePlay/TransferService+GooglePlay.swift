import Postgres

/// An admin transfer of a Google Play purchase, named by its Google order id (the paid order's
/// `transaction_id`): the same moves as Apple's, with `google_purchases` changing hands. What
/// moves is what is left of the purchase: the new order is for the units no refund took back
/// (Google refunds part of a multi-quantity purchase), and is credited what the old order's
/// rows still held, as Apple's are.
extension TransferService {
  /// The transfer, or nil when no Google purchase goes by `orderId`.
  func transferGoogle(
    _ orderId: String, to userId: String, by admin: String, reason: String?,
    audit: AdminActor?, on tx: PostgresTransaction
  ) async throws -> Result? {
    guard let google,
      let row = try await tx.query(
        """
        SELECT purchase_token, package_name, kind, product_id, google_product_id, order_id,
          quantity, refunded_quantity, obfuscated_account_id, environment, trade_no, user_id,
          revoked_at IS NOT NULL AS revoked,
          (extract(epoch FROM purchase_time) * 1000)::bigint AS purchase_ms,
          (extract(epoch FROM expiry_time) * 1000)::bigint AS expiry_ms
        FROM google_purchases WHERE order_id = \(orderId) AND trade_no IS NOT NULL FOR UPDATE
        """
      ).first
    else { return nil }
    let owner: String = try row.decode("user_id")
    let tradeNo: String = try row.decode("trade_no")
    guard !UserId.same(owner, userId) else { throw TransferRefusal.alreadyOwned }
    guard !(try row.decode("revoked", as: Bool.self)) else {
      throw TransferRefusal.notTransferable("Google refunded or revoked it")
    }
    let purchase = GooglePurchase(
      token: try row.decode("purchase_token"), packageName: try row.decode("package_name"),
      kind: try row.decode("kind"), googleProductId: try row.decode("google_product_id"),
      basePlanId: nil, orderId: try row.decode("order_id"), quantity: try row.decode("quantity"),
      obfuscatedAccountId: try row.decodeIfPresent("obfuscated_account_id"),
      isTest: try row.decode("environment") == "Sandbox",
      purchaseTimeMs: try row.decode("purchase_ms"),
      expiryTimeMs: try row.decodeIfPresent("expiry_ms"),
      linkedPurchaseToken: nil, state: "transferred",
      // Google was told once, for the first owner: nothing more to acknowledge.
      acknowledged: true, consumed: true)
    guard let old = try await orders.find(tradeNo, lock: true, on: tx),
      let transition = try? OrderStateMachine.transition(
        from: old.tradeStatus, closeReason: old.closeReason, on: .transferred)
    else { throw TransferRefusal.notTransferable("its order is not paid") }
    // The units no refund took back: what the new order is for, and what refunds of it take a
    // share of (`GoogleNotificationService.refund` divides by the order's quantity).
    let left = purchase.quantity - (try row.decode("refunded_quantity", as: Int32.self))
    guard left > 0 else { throw TransferRefusal.notTransferable("Google refunded all of it") }
    try await orders.outbox.lock([owner, userId], on: tx)
    var detail: [String: JSONValue] = [
      "transaction_id": .string(orderId), "admin": .string(admin), "to_user_id": .string(userId),
      "store": .string(OrderStore.googlePlay.rawValue),
    ]
    if let reason { detail["reason"] = .string(reason) }
    let oldDetail = detail
    detail["from_trade_no"] = .string(tradeNo)
    guard let product = try await catalog.product(try row.decode("product_id"), on: tx),
      let order = try await orders.createForPurchase(
        userId: userId, productId: product.productId, quantity: left, origin: .transfer,
        reason: .createdForTransfer, cause: .admin, detail: .object(detail), store: .googlePlay,
        pricedAs: tradeNo, on: tx)
    else { throw TransferRefusal.notTransferable("its product is no longer in the catalog") }
    var moved = detail
    moved["to_trade_no"] = .string(order.tradeNo)
    moved["product_id"] = .string(product.productId)
    moved["from_user_id"] = .string(owner)
    // The purchase changes hands first: the old owner's events then record the state without
    // it (a Google subscription's access follows its purchase row), and the settlement's claim
    // finds it this order's.
    try await tx.execute(
      """
      UPDATE google_purchases SET trade_no = \(order.tradeNo), user_id = \(userId), updated_at = now()
      WHERE purchase_token = \(purchase.token)
      """)
    try await orders.transition(
      .order(tradeNo), transition, cause: .admin, detail: .object(oldDetail),
      effects: [
        Ledger.reverse(.transferred, transactionId: orderId),
        Ledger.move(to: userId, tradeNo: order.tradeNo, transactionId: orderId),
      ],
      events: [EventDraft(.adminTransfer, moved)], on: tx)
    try await orders.detachTransaction(tradeNo, on: tx)
    let settled = try await google.settleLocked(
      order, product: Self.creditingNothing(product), purchase: purchase, cause: .admin,
      record: nil, events: [EventDraft(.adminTransfer, moved)], paidAsOrder: tradeNo, on: tx)
    if let audit {
      var after: [String: JSONValue] = [
        "user_id": .string(userId), "trade_no": .string(settled.order.tradeNo),
      ]
      if let reason { after["reason"] = .string(reason) }
      try await AuditLog.record(
        .purchaseTransferred, by: audit, targetId: orderId,
        before: JSONValue.object(["user_id": .string(owner), "trade_no": .string(tradeNo)]),
        after: JSONValue.object(after), on: tx)
    }
    return Result(transactionId: orderId, fromTradeNo: tradeNo, order: settled.order)
  }
}
