import Postgres

extension GoogleSettlement {
  /// An order of its own for a purchase made with the obfuscated account id of `order`, which
  /// another purchase already paid: the app ran the billing flow again with the same order
  /// (Google's answer or Storekeeper's was lost), or reused the order's id for a resubscription.
  /// Google charged for both, and refunds within three days whatever is not acknowledged or
  /// consumed, so both are credited, as on the App Store (`SettlementService`). Nil for
  /// another period of the purchase that paid the order (the same token: a renewal pays an
  /// order of its own through the push path) and for one Google voided (nothing to credit). One
  /// already settled so on an order of the same user is that order again, so the report told
  /// again is answered as it was; another recorded one is the claim's to judge.
  func orderForSecondPurchase(
    _ purchase: GooglePurchase, of order: Order, cause: OrderEventCause,
    on tx: PostgresTransaction
  ) async throws -> Order? {
    guard order.tradeStatus == .tradeSuccess, let paidBy = order.transactionId,
      paidBy != purchase.orderId
    else { return nil }
    let related = try await tx.query(
      """
      SELECT (SELECT g.trade_no FROM google_purchases g
              WHERE g.purchase_token = \(purchase.token) AND g.user_id = \(order.userId))
               AS settled_on,
             EXISTS (SELECT 1 FROM google_purchases WHERE purchase_token = \(purchase.token))
               AS known,
             EXISTS (SELECT 1 FROM google_purchases
                     WHERE purchase_token = \(purchase.token) AND trade_no = \(order.tradeNo))
               AS same_purchase,
             EXISTS (SELECT 1 FROM google_voids WHERE purchase_token = \(purchase.token))
               AS voided
      """
    ).first
    guard let related, try related.decode("same_purchase", as: Bool.self) == false else {
      return nil
    }
    if let settledOn: String = try related.decodeIfPresent("settled_on") {
      return settledOn == order.tradeNo ? nil : try await orders.find(settledOn, lock: true, on: tx)
    }
    guard try related.decode("known", as: Bool.self) == false,
      try related.decode("voided", as: Bool.self) == false
    else { return nil }
    return try await orders.createForPurchase(
      userId: order.userId, productId: order.productId, quantity: order.quantity,
      origin: .receipt, reason: .createdForReceipt, cause: cause,
      detail: .object([
        "store": .string(OrderStore.googlePlay.rawValue),
        "bought_with_order": .string(order.tradeNo),
      ]),
      store: .googlePlay, on: tx)
  }
}
