import Postgres
import StorekeeperLogging

/// `POST /v1/receipts` for Google Play: a purchase token with no order named (a restore, or a
/// purchase whose order call was lost). The purchase pays the order its obfuscated account id
/// names, only for that order's user; one naming none gets an order of its own; one another
/// user owns is theirs and no one else's.
extension GoogleSettlement {
  /// Another post claimed the token between this one's read and its claim.
  private struct LostRace: Error {}

  package func apply(_ purchase: GooglePurchase, userId: String, product: Product) async throws
    -> ReceiptOutcome
  {
    let (item, quantity): (ReceiptOutcome.Item, Int32)
    do {
      (item, quantity) = try await database.withTransaction { tx in
        try await record(purchase, userId: userId, product: product, on: tx)
      }
    } catch is LostRace {
      (item, quantity) = try await database.withTransaction { tx in
        try await record(purchase, userId: userId, product: product, on: tx)
      }
    }
    credited()
    if item.status == .restored && purchase.kind == .subscription {
      // A renewal whose push is lost or still queued: Google was just asked, so the answer's
      // entitlements and orders say what it said.
      await readBack(purchase.token)
    }
    var delivery: [Delivery] = []
    if item.status.delivers {
      delivery.append(
        Delivery(
          product: product, quantity: quantity, transactionId: purchase.orderId,
          newlyGranted: item.status == .settled,
          balanceCredited: OrderPayment.credits(
            environment: purchase.environment, sandboxCredits: sandboxCredits)))
    }
    return ReceiptOutcome(
      transactions: [item], entitlements: try await entitlements.view(userId: userId),
      delivery: delivery)
  }

  private func record(
    _ purchase: GooglePurchase, userId: String, product: Product, on tx: PostgresTransaction
  ) async throws -> (ReceiptOutcome.Item, Int32) {
    var item = ReceiptOutcome.Item(
      transactionId: purchase.orderId, originalTransactionId: purchase.token,
      productId: product.productId, status: .recorded, tradeNo: nil)
    let known = try await GooglePurchaseRecord.find(purchase.token, on: tx)
    if let known, let owner = known.userId {
      let mine = UserId.same(owner, userId)
      item.status = known.revoked ? .revoked : mine ? .restored : .notYours
      item.tradeNo = mine ? known.tradeNo : nil
      return (item, purchase.quantity)
    }
    let order: Order
    if let token = AccountToken.normalized(purchase.obfuscatedAccountId),
      let ordered = try await orders.find(
        accountToken: token, store: .googlePlay, lock: true, on: tx)
    {
      // Bought for an order: it pays that order (if it is for the product bought: `check`), and
      // only that order's user may say so.
      guard UserId.same(ordered.userId, userId) else {
        item.status = .notYours
        return (item, purchase.quantity)
      }
      order = ordered
    } else if purchase.obfuscatedAccountId != nil {
      // It names an order this server never made: another installation's, or made up.
      item.status = .refused
      item.code = SettlementRefusal.accountTokenMismatch.code
      return (item, purchase.quantity)
    } else if !(1...Self.maxQuantity).contains(purchase.quantity) {
      // No order holds more than 10 units (0002): refused before one is made, so each repeated
      // restore does not leave another unpaid order behind.
      let refusal = SettlementRefusal.quantityMismatch(
        charged: Int(purchase.quantity), ordered: Self.maxQuantity)
      alertIfUncreditable(refusal, purchase, tradeNo: nil)
      item.status = .refused
      item.code = refusal.code
      return (item, purchase.quantity)
    } else if let created = try await orders.createForPurchase(
      userId: userId, productId: product.productId, quantity: Int32(purchase.quantity),
      origin: .receipt,
      reason: .createdForReceipt, cause: .receipt,
      detail: .object(["store": .string(OrderStore.googlePlay.rawValue)]), store: .googlePlay,
      on: tx)
    {
      order = created
    } else {
      item.status = .unknownProduct
      return (item, 0)
    }
    do {
      try Self.check(purchase, of: product, pays: order)
      let settled = try await settleLocked(
        order, product: product, purchase: purchase, cause: .receipt, record: nil, on: tx)
      item.status = settled.delivery.newlyGranted ? .settled : .restored
      item.tradeNo = settled.order.tradeNo
      return (item, settled.order.quantity)
    } catch SettlementRefusal.transactionAlreadyUsed where known == nil {
      throw LostRace()
    } catch let refusal as SettlementRefusal {
      alertIfUncreditable(refusal, purchase, tradeNo: order.tradeNo)
      item.status = .refused
      item.code = refusal.code
      return (item, purchase.quantity)
    }
  }
}
