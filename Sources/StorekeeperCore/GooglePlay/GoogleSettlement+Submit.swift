import StorekeeperLogging

/// A restore posted to `/v1/receipts` with `"store": "google_play"`: stored as a pending
/// report first, so one that waits on Google (or whose process dies meanwhile) is the retry
/// worker's.
extension GoogleSettlement {
  package func submit(
    userId: String, productId: String, token: String, gate: VerificationGate, logger: Logger
  ) async throws -> ReceiptService.Result {
    guard let product = try await catalog.product(productId) else {
      throw OrderRefusal.productNotFound(productId)
    }
    let gone = VerificationBusy(lane: .google, retryAfterSeconds: gate.retryAfterSeconds)
    // A client that left stores nothing for the retry worker to ask Google about.
    if Task.isCancelled { throw gone }
    let proof = Proof.googlePurchase(token)
    let reportId = try await reports.insertPending(
      tradeNo: nil, userId: userId, productId: productId, proof: proof)
    let fields: [String: LogValue] = ["user_id": .string(userId), "store": "google_play"]
    let verdict: GoogleVerdict
    switch await verifier.verify(token: token, product: product, triedAt: gate) {
    case .verdict(let answer): verdict = answer
    case .busy:
      // Past Google's own cap the stored restore is the retry worker's, due at its next pass.
      try await reports.retryLater(
        reportId, error: ReportProcessor.googleBusy, atMs: reports.clock.milliseconds)
      logger.warning("restore postponed: Google's calls are at their cap", fields)
      return .pending(reportId: reportId)
    case .clientGone:
      // This task is cancelled (its client left), and a statement run from a cancelled task is
      // cancelled at once: given up from a task of its own, or the restore stayed pending for
      // the retry worker to ask Google again.
      let reports = reports
      try await Task {
        try await reports.finish(reportId, outcome: .gaveUp, code: ReportProcessor.clientGone)
      }.value
      throw gone
    }
    let refusal: SettlementRefusal
    switch verdict {
    case .purchased(let purchase):
      let outcome = try await apply(purchase, userId: userId, product: product)
      try await reports.finish(reportId, outcome: .settled, code: nil)
      if outcome.transactions.contains(where: { $0.status == .notYours }) {
        logger.warning("Google purchase names another user's order", fields)
        throw SettlementRefusal.purchaseNotYours
      }
      logger.notice("Google purchase applied", fields)
      return .applied(outcome)
    case .pending, .retryable, .misconfigured:
      let reason: String =
        switch verdict {
        case .pending: ReportProcessor.googlePending
        case .retryable(let why): why
        case .misconfigured(let why): "google_credentials_refused: \(why)"
        default: "retryable"
        }
      try await reports.retryLater(
        reportId, error: reason,
        atMs: reports.clock.milliseconds + reports.policy.delayMs(afterAttempt: 1))
      logger.warning(
        "Google purchase postponed", fields.merging(["reason": .string(reason)]) { $1 })
      return .pending(reportId: reportId)
    case .canceled: refusal = .googlePurchaseCanceled
    case .unknownToken: refusal = .googlePurchaseUnknown
    case .otherProduct(let ids): refusal = .productMismatch(paidFor: ids, ordered: productId)
    case .refused(let text):
      refusal = .invalidProof(reason: "google_refused: \(text)", field: "purchase_token")
    }
    try await reports.finish(reportId, outcome: .rejected, code: refusal.code)
    logger.warning(
      "Google purchase refused", fields.merging(["code": .string(refusal.code)]) { $1 })
    throw refusal
  }
}
