import StorekeeperLogging

/// The retry worker's side of Google reports: a stored report (about an order, or a restore
/// posted to `/v1/receipts`) asked again.
extension ReportProcessor {
  package func retryGoogle(_ report: ReportStore.Due, token: String, logger: Logger) async throws
    -> GoogleRetry
  {
    guard let google else {
      return .wait(reason: "google_play_disabled", mayGiveUp: false)
    }
    let product: Product
    if let tradeNo = report.tradeNo {
      guard let context = try await orders.reportContext(tradeNo, proof: report.proof) else {
        try await reports.finish(report.id, outcome: .rejected, code: "order_not_found")
        return .done("order gone")
      }
      product = context.product
    } else if let productId = report.productId,
      let found = try await google.catalog.product(productId)
    {
      product = found
    } else {
      try await reports.finish(report.id, outcome: .rejected, code: "product_not_found")
      return .done("product gone")
    }
    let verdict = await gate.waitingForSlot(.google) {
      await google.verifier.verify(token: token, product: product)
    }
    switch verdict {
    case .pending: return .wait(reason: Self.googlePending, mayGiveUp: false)
    case .misconfigured(let why):
      return .wait(reason: "google_credentials_refused: \(why)", mayGiveUp: false)
    case .retryable(let why): return .wait(reason: why, mayGiveUp: true)
    default: break
    }
    guard let tradeNo = report.tradeNo else {
      return try await finishRestore(report, verdict: verdict, product: product, google: google)
    }
    guard let order = try await orders.find(tradeNo) else { return .done("order gone") }
    do {
      _ = try await applyGoogle(
        verdict, tradeNo: tradeNo, order: order, product: product, record: .stored(id: report.id),
        cause: .retryWorker, logger: logger)
      return .done("settled")
    } catch let refusal as SettlementRefusal {
      return .done("refused: \(refusal.code)")
    }
  }

  private func finishRestore(
    _ report: ReportStore.Due, verdict: GoogleVerdict, product: Product, google: GoogleSettlement
  ) async throws -> GoogleRetry {
    let code: String
    switch verdict {
    case .purchased(let purchase):
      guard let userId = report.userId else {
        code = "user_required"
        break
      }
      _ = try await google.apply(purchase, userId: userId, product: product)
      try await reports.finish(report.id, outcome: .settled, code: nil)
      return .done("restore applied")
    case .canceled: code = SettlementRefusal.googlePurchaseCanceled.code
    case .unknownToken: code = SettlementRefusal.googlePurchaseUnknown.code
    case .otherProduct: code = "product_mismatch"
    default: code = "google_refused"
    }
    try await reports.finish(report.id, outcome: .rejected, code: code)
    return .done("refused: \(code)")
  }
}
