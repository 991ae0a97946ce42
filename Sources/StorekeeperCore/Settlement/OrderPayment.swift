import Postgres

/// What paying an order does the same way whichever store's purchase pays it.
enum OrderPayment {
  /// An order already paid, reported again: only the purchase that paid it may, and then
  /// nothing changes but the report's outcome.
  static func repeated(
    _ order: Order, paidBy purchaseId: String, record: ReportStore.Record?, reports: ReportStore,
    on tx: PostgresTransaction
  ) async throws {
    guard order.transactionId == purchaseId else {
      throw SettlementRefusal.orderAlreadyPaid(tradeNo: order.tradeNo, byAnotherTransaction: true)
    }
    switch record {
    case .new(let proof):
      try await reports.insertFinal(
        tradeNo: order.tradeNo, tradeStatus: .tradeSuccess, proof: proof, outcome: .settled,
        code: nil, on: tx)
    case .stored(let id): try await reports.finish(id, outcome: .settled, code: nil, on: tx)
    case nil: break
    }
  }

  /// Refuses, before any proof is matched to it, an unpaid order that no payment can reopen
  /// (refunded, or its purchase moved by an admin). Why the order is closed is the answer
  /// whatever the proof says now: after a transfer Apple's copy of the transaction carries the
  /// new owner's app account token as soon as the worker has set it, and a refusal that
  /// depended on that timing would tell the same client two different things.
  static func checkReopenable(_ order: Order) throws {
    guard order.tradeStatus != .tradeSuccess else { return }
    _ = try transition(order)
  }

  /// The transition a payment makes from the order's state.
  static func transition(_ order: Order) throws -> OrderTransition {
    do {
      return try OrderStateMachine.transition(
        from: order.tradeStatus, closeReason: order.closeReason,
        on: OrderStateMachine.paymentReason(for: order.tradeStatus))
    } catch {
      // Only a payment taken back leaves an order that no payment reopens; which way it was
      // taken back is what the client needs to hear.
      throw order.closeReason == .transferred
        ? SettlementRefusal.orderTransferred(tradeNo: order.tradeNo)
        : SettlementRefusal.orderRefunded(tradeNo: order.tradeNo)
    }
  }

  /// What the client is told the order delivered.
  static func delivery(
    _ order: Order, product: Product, newlyGranted: Bool, sandboxCredits: Bool
  ) -> SettledOrder {
    SettledOrder(
      order: order,
      delivery: Delivery(
        product: product, quantity: order.quantity, transactionId: order.transactionId,
        newlyGranted: newlyGranted,
        balanceCredited: credits(environment: order.environment, sandboxCredits: sandboxCredits)))
  }

  /// Whether a purchase of `environment` credits balances: not one made in the sandbox when
  /// `SANDBOX_POLICY` says sandbox money credits nothing.
  static func credits(environment: String?, sandboxCredits: Bool) -> Bool {
    environment != "Sandbox" || sandboxCredits
  }

  /// The balance a purchase credits (`credits`).
  static func credit(
    _ product: Product, purchaseId: String, environment: String, sandboxCredits: Bool
  ) throws -> PostgresQuery? {
    guard credits(environment: environment, sandboxCredits: sandboxCredits) else { return nil }
    return try Ledger.grant(product, transactionId: purchaseId, environment: environment)
  }
}
