import AppStore
import Postgres
import StorekeeperLogging

/// `POST /v1/receipts`: a proof with no order named — seed 000's legacy post, a restore, or a
/// purchase whose order call was lost. Every transaction is recorded once; the user's open
/// orders settle; purchases without an order get one; a consumable is credited only the first
/// time its transaction is seen with an owner. Without a user, nothing is credited here: the app
/// grants from the content delivered, so the post that first records a transaction is told
/// `newly_granted` and every later one is not.
package struct ReceiptService: Sendable {
  let orders: OrderRepository
  let reports: ReportStore
  let verifier: ProofVerifier
  let settlement: SettlementService
  let catalog: CatalogRepository
  let entitlements: EntitlementRepository
  /// Admits the signature checks (queued, refused before anything is stored when the queue is
  /// full or too slow) and Apple's calls (past that cap a stored receipt waits for the retry
  /// worker).
  var gate = VerificationGate.unbounded

  package init(
    orders: OrderRepository, reports: ReportStore, verifier: ProofVerifier,
    settlement: SettlementService, catalog: CatalogRepository, entitlements: EntitlementRepository,
    gate: VerificationGate = VerificationGate.unbounded
  ) {
    self.orders = orders
    self.reports = reports
    self.verifier = verifier
    self.settlement = settlement
    self.catalog = catalog
    self.entitlements = entitlements
    self.gate = gate
  }

  /// A receipt post, as the edge read it.
  package struct Submission: Sendable {
    package var userId: String?
    var productId: String?
    var proof: Proof

    package init(userId: String? = nil, productId: String? = nil, proof: Proof) {
      self.userId = userId
      self.productId = productId
      self.proof = proof
    }
  }

  package enum Result: Sendable {
    case applied(ReceiptOutcome)
    /// Apple could not be asked (away, or at its cap); the retry worker applies it later.
    case pending(reportId: Int64)
  }

  package func submit(_ submission: Submission, logger: Logger) async throws -> Result {
    let proof = submission.proof
    let verification: VerificationResult<[VerifiedTransaction]>
    let reportId: Int64
    switch proof {
    case .googlePurchase:
      // The edge sends Google's restores to `GoogleSettlement.submit`.
      throw SettlementRefusal.storeMismatch(ordered: OrderStore.appStore.rawValue)
    case .signedTransaction(let jws):
      // Only the signature check holds a slot, never the database work after it.
      let verdict = try await gate.withQueuedSlot(.cpu) { verifier.verifySigned(jws) }
      // Refused offline: its hash and size are kept, never its text (a flood of junk at 64 KiB
      // a post would be written whole and purged later), as for a report's.
      if case .invalid(let reason) = verdict {
        try await reports.insertRefused(
          tradeNo: nil, userId: submission.userId, productId: submission.productId, proof: proof,
          code: reason)
        logger.warning(
          "signed transaction refused before it was stored",
          ["user_id": .string(submission.userId ?? ""), "reason": .string(reason)])
        throw SettlementRefusal.invalidProof(reason: reason, field: proof.field)
      }
      reportId = try await reports.insertPending(
        tradeNo: nil, userId: submission.userId, productId: submission.productId, proof: proof)
      verification = verdict
    case .receipt(let receipt):
      let admission = ReceiptAdmission(verifier: verifier, reports: reports, gate: gate)
      // A post with a user can be answered pending: the retry worker credits them later and
      // their state shows it. A userless one (seed 000) has no later channel, and its client
      // finishes the purchase whatever it hears, so it waits for Apple while it may.
      switch try await admission.admit(
        proof, receipt: receipt, tradeNo: nil, userId: submission.userId,
        productId: submission.productId, waitsForApple: submission.userId == nil, logger: logger,
        fields: ["user_id": .string(submission.userId ?? "")])
      {
      case .answered(let answer, let id):
        reportId = id
        verification = answer
      case .appleBusy(let id):
        // Past Apple's own cap (for a userless post: past its wait for a slot) the stored
        // receipt is the retry worker's, as when Apple is away, and due at its next pass.
        try await reports.retryLater(
          id, error: ReportProcessor.appleBusy, atMs: reports.clock.milliseconds)
        logger.warning(
          "receipt postponed: Apple's calls are at their cap",
          ["user_id": .string(submission.userId ?? "")])
        return .pending(reportId: id)
      }
    }
    switch verification {
    case .valid(let transactions):
      let outcome = try await apply(
        transactions, userId: submission.userId, productId: submission.productId)
      try await reports.finish(reportId, outcome: .settled, code: nil)
      let statuses = Set(outcome.transactions.map(\.status))
      // Refused only when every purchase is someone else's: one recorded for a post without a
      // user, or refused or refunded, is answered with the rest.
      if statuses == [.notYours] {
        logger.warning(
          "receipt names another user's purchase",
          ["user_id": .string(submission.userId ?? "")])
        throw SettlementRefusal.purchaseNotYours
      }
      logger.notice(
        "receipt applied",
        [
          "user_id": .string(submission.userId ?? ""),
          "transactions": .int(outcome.transactions.count),
        ])
      return .applied(outcome)
    case .invalid(let reason):
      try await reports.finish(reportId, outcome: .invalid, code: reason)
      throw SettlementRefusal.invalidProof(reason: reason, field: submission.proof.field)
    case .retryable, .misconfigured:
      // Waits like a report: a fault of Apple's or of this server's settings is no refusal.
      try await reports.retryLater(
        reportId, error: verification.reason ?? "retryable",
        atMs: reports.clock.milliseconds + reports.policy.delayMs(afterAttempt: 1))
      return .pending(reportId: reportId)
    }
  }

  package func apply(_ transactions: [VerifiedTransaction], userId: String?, productId: String?)
    async throws -> ReceiptOutcome
  {
    var items: [ReceiptOutcome.Item] = []
    var delivery: [Delivery] = []
    // Refunds the proof shows and no notification brought apply first, so the entitlements
    // answered beside a purchase listed `revoked` no longer grant it.
    try await settlement.applyRefundsShown(by: transactions, cause: .receipt)
    for transaction in transactions.sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
      let (item, product, quantity) = try await recordOnce(transaction, userId: userId)
      items.append(item)
      if let product, productId == nil || productId == product.productId, item.status.delivers {
        delivery.append(
          Delivery(
            product: product, quantity: quantity, transactionId: transaction.transactionId,
            newlyGranted: item.status == .settled
              || (item.status == .recorded && item.firstRecorded),
            balanceCredited: OrderPayment.credits(
              environment: transaction.environment, sandboxCredits: settlement.sandboxCredits)))
      }
    }
    settlement.transactionRecorded()
    var view: Entitlements?
    if let userId { view = try await entitlements.view(userId: userId) }
    return ReceiptOutcome(transactions: items, entitlements: view, delivery: delivery)
  }

  /// Another post claimed the transaction between this one's read and its claim.
  private struct LostRace: Error {}

  /// Records in one database transaction; one that lost a race for the transaction is rolled
  /// back (so it leaves no order behind) and read again, now seeing the winner.
  func recordOnce(_ transaction: VerifiedTransaction, userId: String?) async throws
    -> (ReceiptOutcome.Item, Product?, Int32)
  {
    do {
      return try await orders.database.withTransaction { tx in
        try await record(transaction, userId: userId, on: tx)
      }
    } catch is LostRace {
      return try await orders.database.withTransaction { tx in
        try await record(transaction, userId: userId, on: tx)
      }
    }
  }

  private func record(
    _ transaction: VerifiedTransaction, userId: String?, on tx: PostgresTransaction
  ) async throws -> (ReceiptOutcome.Item, Product?, Int32) {
    var item = ReceiptOutcome.Item(
      transactionId: transaction.transactionId,
      originalTransactionId: transaction.originalTransactionId,
      productId: transaction.productId, status: .recorded, tradeNo: nil)
    guard let product = try await catalog.product(transaction.productId, on: tx) else {
      item.status = .unknownProduct
      return (item, nil, 0)
    }
    let quantity = Int32(clamping: max(1, min(10, transaction.quantity)))
    let source = SettlementService.source(of: transaction)
    let known = try await TransactionRecord.find(transaction.transactionId, on: tx)
    if known != nil && transaction.isFamilyShared {
      try await TransactionRecord.learnFamilyShared(transaction.transactionId, on: tx)
    }
    func keepUnowned(_ status: ReceiptOutcome.Status) async throws
      -> (ReceiptOutcome.Item, Product?, Int32)
    {
      if known == nil {
        item.firstRecorded = try await TransactionRecord.recordUnowned(
          transaction, source: source, on: tx)
      }
      item.status = status
      return (item, product, quantity)
    }
    /// Settles `order` with the transaction; a refusal is listed, a lost race retried. Apple's
    /// refunds of it are read below, in this transaction, before any order is settled.
    func settle(_ order: Order, item: ReceiptOutcome.Item) async throws
      -> (ReceiptOutcome.Item, Product?, Int32)
    {
      var item = item
      do {
        let settled = try await settlement.settleLocked(
          order, product: product, transaction: transaction, source: .receipt, cause: .receipt,
          record: nil, appleRevoked: false, on: tx)
        item.status = settled.delivery.newlyGranted ? .settled : .restored
        item.tradeNo = settled.order.tradeNo
        return (item, product, settled.order.quantity)
      } catch SettlementRefusal.transactionAlreadyUsed where known == nil {
        throw LostRace()
      } catch let refusal as SettlementRefusal {
        item.status = .refused
        item.code = refusal.code
        return (item, product, quantity)
      }
    }

    // Another user's purchase is named as such and no more: not its order, not its user. One
    // Apple refunded is revoked, whether the proof says so or a notification recorded it after
    // the proof was signed (a kept StoreKit 2 transaction never learns of its refund).
    if let known, let owner = known.userId {
      let mine = UserId.same(owner, userId)
      let revoked = transaction.revocationDate != nil || known.revoked
      item.status = revoked ? .revoked : mine ? .restored : .notYours
      item.tradeNo = mine ? known.tradeNo : nil
      return (item, product, quantity)
    }
    // Refunded as a proof showed before (kept revoked, without an owner): a proof signed before
    // the refund does not make it live again.
    if transaction.revocationDate != nil || known?.revoked == true {
      return try await keepUnowned(.revoked)
    }
    // Refunded by a notification that came before any proof (deferred, the purchase unknown):
    // revoked as if the proof said so. The row records it too, so neither a later post nor an
    // admin transfer takes it for a live purchase; the refund itself stays deferred, as there is
    // no order for it to close.
    if let revocation = try await RefundHistory.revocation(transaction.transactionId, on: tx) {
      let kept = try await keepUnowned(.revoked)
      try await TransactionRecord.setRevocation(
        transaction.transactionId, atMs: revocation.atMs, reason: revocation.reason, on: tx)
      return kept
    }
    // A renewal of a subscription someone owns is theirs, whoever posts it: credited to them
    // now, on an order of their own, even when it was kept without an owner before. Anyone else
    // hears `not_yours` and gets nothing.
    if known?.revoked != true,
      let subscriber = try await settlement.subscriber(
        ofRenewal: transaction, product: product, on: tx),
      let renewal = try await settlement.renewalOrder(
        for: subscriber, transaction, product: product, recorded: known != nil, cause: .receipt,
        on: tx)
    {
      let settled = try await settle(renewal, item: item)
      guard UserId.same(subscriber, userId) else {
        item.status = .notYours
        return (item, product, quantity)
      }
      return settled
    }
    guard let userId else { return try await keepUnowned(.recorded) }
    let order: Order
    if let token = TransactionRecord.validToken(transaction.appAccountToken),
      let ordered = try await orders.find(
        accountToken: token, store: .appStore, lock: true, on: tx)
    {
      // Bought for an order: it pays that order, and only that order's user may say so.
      guard UserId.same(ordered.userId, userId) else { return try await keepUnowned(.notYours) }
      // And only if it is what that order asked for, as a report's purchase must be: the app
      // chooses the token, so one cheap purchase must not pay an order for ten or for a dearer
      // product.
      do {
        _ = try TransactionMatcher.match(ordered, in: [transaction], usedElsewhere: [])
      } catch {
        item.code = error.code
        return try await keepUnowned(.refused)
      }
      order = ordered
    } else if known != nil {
      // Recorded without an owner and naming no order of this user's: a later post may not
      // claim it (a leaked receipt would be anyone's); an admin transfer can.
      return try await keepUnowned(.notYours)
    } else if let open = try await orders.openOrder(
      userId: userId, productId: product.productId, quantity: Int32(clamping: transaction.quantity),
      store: .appStore, on: tx)
    {
      order = open
    } else if let created = try await orders.createForPurchase(
      userId: userId, productId: product.productId, quantity: quantity, origin: .receipt,
      reason: .createdForReceipt, cause: .receipt, storefront: transaction.storefront, on: tx)
    {
      order = created
    } else {
      item.status = .unknownProduct
      return (item, nil, 0)
    }
    return try await settle(order, item: item)
  }
}
