import AppStore
import StorekeeperLogging

/// Reports about orders, for the route and the retry worker alike: verify the proof, settle
/// the order or record why not. A proof Apple must check is stored as a pending report first,
/// so a report survives Apple being away, Apple's call being at its cap and the process dying;
/// a signed transaction, checked offline, is stored with its outcome.
package struct ReportProcessor: Sendable {
  let orders: OrderRepository
  let reports: ReportStore
  package let verifier: ProofVerifier
  let settlement: SettlementService
  /// Admits the signature checks (queued, refused before anything is stored when the queue is
  /// full or too slow) and Apple's calls (past that cap a report waits for the retry worker).
  package var gate = VerificationGate.unbounded
  /// Google Play's side; nil when it is off (`GOOGLE_PLAY_PACKAGE_NAME` unset).
  package var google: GoogleSettlement? = nil
  /// Records what a receipt holds beside the purchase that paid its order
  /// (`ReceiptService.recordUnseen`); nil records nothing more.
  package var receipts: ReceiptService? = nil

  package init(
    orders: OrderRepository, reports: ReportStore, verifier: ProofVerifier,
    settlement: SettlementService, gate: VerificationGate = VerificationGate.unbounded
  ) {
    self.orders = orders
    self.reports = reports
    self.verifier = verifier
    self.settlement = settlement
    self.gate = gate
  }

  /// `actingUser` is the user the report comes from, or nil for a trusted caller that may
  /// report for anyone. Another user's order is refused as not found, before anything is
  /// recorded, so trade numbers cannot be probed.
  package func process(_ report: TradeReport, actingUser: String? = nil, logger: Logger)
    async throws
    -> ReportResult
  {
    switch report {
    case .paid(let tradeNo, let proof):
      try await paid(tradeNo, proof: proof, actingUser: actingUser, logger: logger)
    case .closed(let tradeNo, let reason):
      try await close(tradeNo, reason: reason, actingUser: actingUser, logger: logger)
    }
  }

  private func paid(_ tradeNo: String, proof: Proof, actingUser: String?, logger: Logger)
    async throws -> ReportResult
  {
    guard let context = try await orders.reportContext(tradeNo, proof: proof),
      UserId.may(actingUser, actFor: context.order.userId)
    else {
      throw SettlementRefusal.orderNotFound(tradeNo: tradeNo)
    }
    // A proof of one store never pays an order of the other.
    let isGoogleProof = proof.kind == .googlePurchase
    if isGoogleProof != (context.order.store == .googlePlay) {
      throw SettlementRefusal.storeMismatch(ordered: context.order.store.rawValue)
    }
    if context.proofSettled {
      return .settled(
        SettledOrder(
          order: context.order,
          delivery: Delivery(
            product: context.product, quantity: context.order.quantity,
            transactionId: context.order.transactionId, newlyGranted: false,
            balanceCredited: OrderPayment.credits(
              environment: context.order.environment,
              sandboxCredits: settlement.sandboxCredits))))
    }
    if case .googlePurchase(let token) = proof {
      return try await verifyGoogle(tradeNo, token: token, context: context, logger: logger)
    }
    return try await verify(tradeNo, proof: proof, context: context, logger: logger)
  }

  private func verify(
    _ tradeNo: String, proof: Proof, context: OrderRepository.ReportContext, logger: Logger
  ) async throws -> ReportResult {
    let order = context.order
    let fields: [String: LogValue] = ["trade_no": .string(LogRedaction.tradeNumber(tradeNo))]
    var record = ReportStore.Record.new(proof)
    let verification: VerificationResult<[VerifiedTransaction]>
    switch proof {
    case .signedTransaction(let jws):
      // Only the signature check holds a slot: settling below waits on the database, not on it.
      verification = try await gate.withQueuedSlot(.cpu) { verifier.verifySigned(jws) }
    case .googlePurchase:
      // Taken by `verifyGoogle` before it gets here.
      throw SettlementRefusal.storeMismatch(ordered: order.store.rawValue)
    case .receipt(let receipt):
      let admission = ReceiptAdmission(verifier: verifier, reports: reports, gate: gate)
      switch try await admission.admit(
        proof, receipt: receipt, tradeNo: tradeNo, userId: order.userId,
        productId: order.productId, logger: logger, fields: fields)
      {
      case .answered(let answer, let id):
        record = .stored(id: id)
        verification = answer
      case .appleBusy(let id):
        // Past Apple's own cap the stored report is the retry worker's, as when Apple is
        // away, and due at its next pass.
        return try await postpone(
          tradeNo, order: order, id: id, reason: Self.appleBusy, atMs: reports.clock.milliseconds,
          logger: logger)
      }
    }
    switch verification {
    case .valid(let transactions):
      let settled = try await settle(
        tradeNo, product: context.product, transactions, record: record, cause: .report,
        logger: logger)
      logger.notice(
        "order settled",
        fields.merging(["transaction_id": .string(settled.order.transactionId ?? "")]) { $1 })
      return .settled(settled)
    case .invalid(let reason):
      let refusal = SettlementRefusal.invalidProof(reason: reason, field: proof.field)
      try await recordRefusal(refusal, outcome: .invalid, tradeNo: tradeNo, record: record)
      logger.warning("invalid proof", fields.merging(["reason": .string(reason)]) { $1 })
      throw refusal
    case .retryable, .misconfigured:
      // Apple could not judge the proof yet, or could not because of this server's own
      // settings: either way the customer's report waits, it is not refused.
      let id: Int64
      switch record {
      case .stored(let stored): id = stored
      case .new:
        id = try await reports.insertPending(
          tradeNo: tradeNo, userId: order.userId, productId: order.productId, proof: proof)
      }
      return try await postpone(
        tradeNo, order: order, id: id, reason: verification.reason ?? "retryable",
        atMs: reports.clock.milliseconds + reports.policy.delayMs(afterAttempt: 1), logger: logger)
    }
  }

  /// What a report waiting on Apple's cap records as its last error.
  static let appleBusy = "apple_busy"

  /// Leaves stored report `id` to the retry worker from `atMs` and answers pending.
  func postpone(
    _ tradeNo: String, order: Order, id: Int64, reason: String, atMs: Int64, logger: Logger
  ) async throws -> ReportResult {
    try await reports.retryLater(id, error: reason, atMs: atMs)
    let current = try await orders.markVerificationPending(tradeNo) ?? order
    logger.warning(
      "verification postponed",
      [
        "trade_no": .string(LogRedaction.tradeNumber(tradeNo)), "reason": .string(reason),
      ])
    return .pending(PendingVerification(order: current, reportId: id))
  }

  /// Settles, or records the definite refusal on the report before it is thrown.
  package func settle(
    _ tradeNo: String, product: Product, _ transactions: [VerifiedTransaction],
    record: ReportStore.Record, cause: OrderEventCause, logger: Logger
  ) async throws -> SettledOrder {
    let settled: SettledOrder
    do {
      settled = try await settlement.settle(
        tradeNo, product: product, transactions: transactions, record: record, cause: cause)
    } catch let refusal as SettlementRefusal {
      try await recordRefusal(refusal, outcome: .rejected, tradeNo: tradeNo, record: record)
      throw refusal
    }
    if let receipts {
      _ = await receipts.recordUnseen(
        transactions, of: settled.order, product: product, logger: logger)
    }
    return settled
  }

  func recordRefusal(
    _ refusal: SettlementRefusal, outcome: ReportOutcome, tradeNo: String,
    record: ReportStore.Record
  ) async throws {
    switch record {
    case .stored(let id):
      try await reports.finish(
        id, outcome: outcome, code: refusal.code, releasing: tradeNo, orders: orders)
    case .new(let proof):
      try await reports.insertFinal(
        tradeNo: tradeNo, tradeStatus: .tradeSuccess, proof: proof, outcome: outcome,
        code: outcome == .invalid ? Self.reason(of: refusal) : refusal.code)
    }
  }

  /// Apple's verdict is what an invalid proof's report keeps as its code.
  private static func reason(of refusal: SettlementRefusal) -> String {
    if case .invalidProof(let reason, _) = refusal { return reason }
    return refusal.code
  }

  private func close(
    _ tradeNo: String, reason: CloseReason, actingUser: String?, logger: Logger
  ) async throws -> ReportResult {
    let order: Order = try await orders.database.withTransaction { tx in
      guard let current = try await orders.find(tradeNo, lock: true, on: tx),
        UserId.may(actingUser, actFor: current.userId)
      else {
        throw SettlementRefusal.orderNotFound(tradeNo: tradeNo)
      }
      switch current.tradeStatus {
      case .tradeSuccess:
        try await reports.insertFinal(
          tradeNo: tradeNo, tradeStatus: .tradeClosed, reason: reason.rawValue,
          outcome: .rejected, code: "order_already_paid", on: tx)
        return current
      case .tradeClosed:
        try await reports.insertFinal(
          tradeNo: tradeNo, tradeStatus: .tradeClosed, reason: reason.rawValue,
          outcome: .unchanged, code: nil, on: tx)
        return current
      case .waitBuyerPay:
        let transition = try OrderStateMachine.transition(
          from: .waitBuyerPay, closeReason: nil, on: reason == .failed ? .failed : .cancelled)
        try await reports.insertFinal(
          tradeNo: tradeNo, tradeStatus: .tradeClosed, reason: reason.rawValue, outcome: .closed,
          code: nil, on: tx)
        guard
          let closed = try await orders.transition(
            .order(tradeNo), transition, cause: .report, on: tx
          ).first
        else { throw SettlementRefusal.orderNotFound(tradeNo: tradeNo) }
        return closed
      }
    }
    if order.tradeStatus == .tradeSuccess {
      throw SettlementRefusal.orderAlreadyPaid(tradeNo: tradeNo, byAnotherTransaction: false)
    }
    logger.info(
      "order closed by report",
      [
        "trade_no": .string(LogRedaction.tradeNumber(tradeNo)), "reason": .string(reason.rawValue),
      ])
    return .closed(order)
  }
}
