import Postgres

/// Moves a purchase to another user: the one explicit way a purchase changes hands. In one
/// database transaction the old order closes as `transferred` (what its rows hold taken back),
/// and a new order of origin `transfer` is paid for the new owner with the same Apple
/// transaction, through the same settlement as any purchase but for the balance: the new owner
/// is credited what was taken back (`Ledger.move`), not the product's grants as they are now.
/// Renewals follow, since they go to the owner of the subscription's latest transaction. Each
/// user gets an `admin.transfer` event before their order's; the transaction changes hands
/// before either order changes, so the state both events carry is the one the transfer commits.
package struct TransferService: Sendable {
  let settlement: SettlementService
  let catalog: CatalogRepository
  /// Google Play's purchases, when it is on (`TransferService+GooglePlay`).
  let google: GoogleSettlement?

  package init(
    settlement: SettlementService, catalog: CatalogRepository, google: GoogleSettlement? = nil
  ) {
    self.settlement = settlement
    self.catalog = catalog
    self.google = google
  }

  var orders: OrderRepository { settlement.orders }

  package struct Result: Encodable, Sendable {
    var transactionId: String
    var fromTradeNo: String?
    package var order: Order

    enum CodingKeys: String, CodingKey {
      case transactionId = "transaction_id"
      case fromTradeNo = "from_trade_no"
      case order
    }
  }

  /// With `audit`, the transfer's `admin_audit` row (owner and order before and after) is
  /// written in the same transaction, so it commits exactly when the transfer does.
  package func transfer(
    _ transactionId: String, to userId: String, by admin: String, reason: String?,
    audit: AdminActor? = nil
  ) async throws -> Result {
    try await orders.database.withTransaction { tx in
      if try await TransactionRecord.find(transactionId, on: tx) == nil,
        let moved = try await transferGoogle(
          transactionId, to: userId, by: admin, reason: reason, audit: audit, on: tx)
      {
        return moved
      }
      guard let known = try await TransactionRecord.find(transactionId, on: tx),
        let transaction = try await TransactionRecord.load(transactionId, on: tx)
      else { throw TransferRefusal.transactionNotFound(transactionId) }
      guard !UserId.same(known.userId, userId) else { throw TransferRefusal.alreadyOwned }
      guard transaction.revocationDate == nil else {
        throw TransferRefusal.notTransferable("Apple refunded or revoked it")
      }
      var detail: [String: JSONValue] = [
        "transaction_id": .string(transactionId), "admin": .string(admin),
        "to_user_id": .string(userId),
      ]
      if let reason { detail["reason"] = .string(reason) }
      var old: (order: Order, transition: OrderTransition)?
      if let tradeNo = known.tradeNo {
        guard let order = try await orders.find(tradeNo, lock: true, on: tx),
          let transition = try? OrderStateMachine.transition(
            from: order.tradeStatus, closeReason: order.closeReason, on: .transferred)
        else { throw TransferRefusal.notTransferable("its order is not paid") }
        old = (order, transition)
      }
      // Both users' sequences, in one order, so two transfers between them cannot deadlock.
      try await orders.outbox.lock(
        [known.userId, old?.order.userId, userId].compactMap { $0 }, on: tx)
      let oldDetail = detail
      if let tradeNo = known.tradeNo { detail["from_trade_no"] = .string(tradeNo) }
      guard let product = try await catalog.product(transaction.productId, on: tx),
        let order = try await orders.createForPurchase(
          userId: userId, productId: product.productId,
          quantity: Int32(clamping: max(1, min(10, transaction.quantity))), origin: .transfer,
          reason: .createdForTransfer, cause: .admin, detail: .object(detail),
          storefront: transaction.storefront, pricedAs: known.tradeNo, on: tx)
      else { throw TransferRefusal.notTransferable("its product is no longer in the catalog") }
      try await TransactionRecord.assign(transactionId, to: order, on: tx)
      var moved: [String: JSONValue] = [
        "transaction_id": .string(transactionId), "admin": .string(admin),
        "to_user_id": .string(userId), "to_trade_no": .string(order.tradeNo),
        "product_id": .string(product.productId),
      ]
      if let reason { moved["reason"] = .string(reason) }
      if let from = known.userId ?? old?.order.userId { moved["from_user_id"] = .string(from) }
      if let tradeNo = known.tradeNo { moved["from_trade_no"] = .string(tradeNo) }
      if let (oldOrder, transition) = old {
        try await orders.transition(
          .order(oldOrder.tradeNo), transition, cause: .admin, detail: .object(oldDetail),
          effects: [
            Ledger.reverse(.transferred, transactionId: transactionId),
            Ledger.move(to: userId, tradeNo: order.tradeNo, transactionId: transactionId),
          ],
          events: [EventDraft(.adminTransfer, moved)], on: tx)
        try await orders.detachTransaction(oldOrder.tradeNo, on: tx)
      }
      // A transaction no order paid (a legacy receipt posted without a user) credited nobody:
      // its first order credits the product's grants, as any purchase.
      let settled: SettledOrder
      do {
        settled = try await settlement.settleLocked(
          order, product: old == nil ? product : Self.creditingNothing(product),
          transaction: transaction,
          source: SettlementService.source(of: transaction), cause: .admin, record: nil,
          events: [EventDraft(.adminTransfer, moved)], paidAsOrder: known.tradeNo, on: tx)
      } catch SettlementRefusal.transactionRevoked {
        // Apple's refund is stored but not yet applied (the notification pass has not reached
        // it, or is waiting for this transaction's locks): not transferable, as once applied,
        // and the documented answer rather than a report's 422. Nothing is moved.
        throw TransferRefusal.notTransferable("Apple refunded or revoked it")
      }
      // The purchase is the new owner's now: Apple's later transactions and notifications for
      // it are to carry the new order's token.
      // (Not a Family Sharing copy: Apple takes no token for one, 4000185.)
      if settlement.bindsAccountTokens, !transaction.isFamilyShared {
        try await AccountTokenJobs.reassign(
          originalTransactionId: transaction.originalTransactionId,
          environment: transaction.environment, order: settled.order, on: tx)
      }
      if let audit {
        var after: [String: JSONValue] = [
          "user_id": .string(userId), "trade_no": .string(settled.order.tradeNo),
        ]
        if let reason { after["reason"] = .string(reason) }
        try await AuditLog.record(
          .purchaseTransferred, by: audit, targetId: transactionId,
          before: Self.owner(known.userId, known.tradeNo), after: JSONValue.object(after), on: tx)
      }
      return Result(transactionId: transactionId, fromTradeNo: known.tradeNo, order: settled.order)
    }
  }

  /// `product` as the new order's settlement sees it when the balance moved with the old
  /// order's transition: without balance grants, so the settlement credits nothing more.
  static func creditingNothing(_ product: Product) -> Product {
    var product = product
    product.draft.grants.balance = nil
    return product
  }

  /// Who held the transaction before: absent fields are left out (a legacy receipt may have
  /// had neither owner nor order).
  private static func owner(_ userId: String?, _ tradeNo: String?) -> JSONValue {
    var fields: [String: JSONValue] = [:]
    if let userId { fields["user_id"] = .string(userId) }
    if let tradeNo { fields["trade_no"] = .string(tradeNo) }
    return .object(fields)
  }
}
