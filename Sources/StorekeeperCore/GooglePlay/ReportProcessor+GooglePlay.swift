import StorekeeperLogging

/// Reports paid with a Google Play purchase token: Google is asked (no proof is checked
/// offline), and its verdict settles the order, waits, or refuses, as Apple's does.
extension ReportProcessor {
  func verifyGoogle(
    _ tradeNo: String, token: String, context: OrderRepository.ReportContext, logger: Logger
  ) async throws -> ReportResult {
    guard let google else { throw GooglePlayOff() }
    let verdict: GoogleVerdict
    switch await google.verifier.verify(token: token, product: context.product, triedAt: gate) {
    case .verdict(let answer): verdict = answer
    case .busy:
      // Past Google's own cap the report is stored for the retry worker, due at its next pass.
      let id = try await reports.insertPending(
        tradeNo: tradeNo, userId: context.order.userId, productId: context.order.productId,
        proof: .googlePurchase(token))
      return try await postpone(
        tradeNo, order: context.order, id: id, reason: Self.googleBusy,
        atMs: reports.clock.milliseconds, logger: logger)
    case .clientGone:
      // Nothing stored: a client that reports again is answered then.
      throw VerificationBusy(lane: .google, retryAfterSeconds: gate.retryAfterSeconds)
    }
    return try await applyGoogle(
      verdict, tradeNo: tradeNo, order: context.order, product: context.product,
      record: .new(.googlePurchase(token)), cause: .report, logger: logger)
  }

  /// What a verdict does to an order's report: the route's (`record` new) and the retry
  /// worker's (`record` stored) alike. Pending purchases and this server's own
  /// misconfiguration wait without giving up; Google's outages wait on the retry policy.
  package func applyGoogle(
    _ verdict: GoogleVerdict, tradeNo: String, order: Order, product: Product,
    record: ReportStore.Record, cause: OrderEventCause, logger: Logger
  ) async throws -> ReportResult {
    guard let google else { throw GooglePlayOff() }
    let fields: [String: LogValue] = [
      "trade_no": .string(LogRedaction.tradeNumber(tradeNo)), "store": "google_play",
    ]
    let refusal: SettlementRefusal
    switch verdict {
    case .purchased(let purchase):
      do {
        let settled = try await google.settle(
          tradeNo, product: product, purchase: purchase, record: record, cause: cause)
        logger.notice(
          "order settled",
          fields.merging([
            "transaction_id": .string(LogRedaction.transactionId(purchase.orderId)),
            "environment": .string(purchase.environment),
          ]) { $1 })
        return .settled(settled)
      } catch let refused as SettlementRefusal {
        refusal = refused
      }
    case .pending, .retryable, .misconfigured:
      let reason: String
      switch verdict {
      case .pending: reason = Self.googlePending
      case .retryable(let why): reason = why
      case .misconfigured(let why): reason = "google_credentials_refused: \(why)"
      default: reason = "retryable"
      }
      let id: Int64
      switch record {
      case .stored(let stored): id = stored
      case .new(let proof):
        id = try await reports.insertPending(
          tradeNo: tradeNo, userId: order.userId, productId: order.productId, proof: proof)
      }
      return try await postpone(
        tradeNo, order: order, id: id, reason: reason,
        atMs: reports.clock.milliseconds + reports.policy.delayMs(afterAttempt: 1), logger: logger)
    case .canceled: refusal = .googlePurchaseCanceled
    case .unknownToken: refusal = .googlePurchaseUnknown
    case .otherProduct(let ids): refusal = .productMismatch(paidFor: ids, ordered: order.productId)
    case .refused(let text):
      refusal = .invalidProof(reason: "google_refused: \(text)", field: "purchase_token")
    }
    try await recordRefusal(
      refusal, outcome: .rejected, tradeNo: tradeNo, record: record)
    logger.warning(
      "Google purchase refused", fields.merging(["code": .string(refusal.code)]) { $1 })
    throw refusal
  }

  /// The last error of a report whose purchase Google holds as pending.
  package static let googlePending = "google_purchase_pending"

  /// The last error of a report waiting on Google's cap (`GOOGLE_PLAY_CONCURRENCY`).
  static let googleBusy = "google_busy"

  /// The outcome code of a restore given up because its client left before Google answered.
  static let clientGone = "client_gone"
}
