import AppStore
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// Retries reports that wait on Apple, on `RetryPolicy`'s schedule, until Apple answers or the
/// policy gives up. Also finishes reports whose process died mid-verification (their lease runs
/// out and they become due again). Reports about orders go through the route's own
/// `ReportProcessor`; receipts through `ReceiptService`.
package struct ReportRetryWorker: Sendable {
  let reports: ReportStore
  let orders: OrderRepository
  let processor: ReportProcessor
  let receipts: ReceiptService
  let logger: Logger

  package init(
    reports: ReportStore, orders: OrderRepository, processor: ReportProcessor,
    receipts: ReceiptService, logger: Logger
  ) {
    self.reports = reports
    self.orders = orders
    self.processor = processor
    self.receipts = receipts
    self.logger = logger
  }

  package func runOnce() async {
    do {
      // Batch after batch until none is due, or the process is stopping: a batch claimed then
      // would wait out its lease.
      while !LoopStop.requested {
        let due = try await reports.claimDue(limit: 20)
        if due.isEmpty { return }
        // At once: each waits for its own slot of the verification lanes, so a backlog left by
        // an outage or a burst past Apple's cap drains as fast as those caps allow, not one
        // Apple call at a time.
        await withTaskGroup(of: Void.self) { group in
          for report in due { group.addTask { await process(report) } }
        }
      }
    } catch {
      logger.warning("report retry pass failed", ["error": .string("\(error)")])
    }
  }

  func process(_ report: ReportStore.Due) async {
    let fields: [String: LogValue] = [
      "report_id": .int(Int(report.id)),
      "trade_no": .string(LogRedaction.tradeNumber(report.tradeNo)),
      "attempt": .int(report.attempts),
    ]
    if case .googlePurchase(let token) = report.proof {
      await processGoogle(report, token: token, fields: fields)
      return
    }
    do {
      // The same lanes as requests, but waiting for a slot: nobody waits on the worker.
      let verdict = await processor.verifier.verify(report.proof, waitingAt: processor.gate)
      switch verdict {
      case .valid(let transactions):
        if let tradeNo = report.tradeNo {
          guard let product = try await orders.reportContext(tradeNo, proof: report.proof)?.product
          else { return }
          do {
            _ = try await processor.settle(
              tradeNo, product: product, transactions, record: .stored(id: report.id),
              cause: .retryWorker, logger: logger)
            logger.notice("pending report settled", fields)
          } catch let refusal as SettlementRefusal {
            logger.warning(
              "pending report refused", fields.merging(["code": .string(refusal.code)]) { $1 })
          }
        } else {
          _ = try await receipts.apply(
            transactions, userId: report.userId, productId: report.productId)
          try await reports.finish(report.id, outcome: .settled, code: nil)
          logger.notice("pending receipt applied", fields)
        }
      case .invalid(let reason):
        try await reports.finish(
          report.id, outcome: .invalid, code: reason, releasing: report.tradeNo, orders: orders)
        logger.warning("pending report invalid", fields.merging(["reason": .string(reason)]) { $1 })
      case .retryable(let reason):
        try await postpone(report, reason: reason, mayGiveUp: true, fields: fields)
      case .misconfigured(let problem):
        // The purchase is not in doubt, this server's settings are: giving up would close a
        // paid order for the operator's mistake, so the report waits (at the policy's capped
        // delay once its window is over) until the setting is fixed.
        try await postpone(
          report, reason: problem.reason, mayGiveUp: false,
          fields: fields.merging(["setting": .string(problem.setting.variable)]) { $1 })
      }
    } catch let unavailable as PostgresError where unavailable.isUnavailable {
      // Nothing was recorded: the report is tried again after its retry delay rather than its
      // lease (or at the lease's end, when even that cannot be written).
      try? await postpone(report, reason: "\(unavailable)", mayGiveUp: false, fields: fields)
      logger.warning(
        "report retry failed: the database is unavailable",
        fields.merging(["error": .string("\(unavailable)")]) { $1 })
    } catch {
      logger.warning("report retry failed", fields.merging(["error": .string("\(error)")]) { $1 })
    }
  }

  /// A Google report: Google is asked again, through the same verdicts as the route's.
  func processGoogle(_ report: ReportStore.Due, token: String, fields: [String: LogValue]) async {
    let fields = fields.merging(["store": "google_play"]) { $1 }
    do {
      switch try await processor.retryGoogle(report, token: token, logger: logger) {
      case .done(let what):
        logger.notice(
          "pending Google report finished", fields.merging(["what": .string(what)]) { $1 })
      case .wait(let reason, let mayGiveUp):
        try await postpone(report, reason: reason, mayGiveUp: mayGiveUp, fields: fields)
      }
    } catch {
      logger.warning(
        "Google report retry failed", fields.merging(["error": .string("\(error)")]) { $1 })
    }
  }

  /// Schedules the next attempt on `RetryPolicy`, or gives the report up when the policy says so
  /// and `mayGiveUp`.
  private func postpone(
    _ report: ReportStore.Due, reason: String, mayGiveUp: Bool, fields: [String: LogValue]
  ) async throws {
    let now = reports.clock.milliseconds
    let decision = reports.policy.decision(
      afterAttempt: report.attempts, firstAttemptMs: report.firstAttemptMs, nowMs: now)
    let atMs: Int64
    switch decision {
    case .giveUp where mayGiveUp:
      try await reports.giveUp(report, reason: reason, orders: orders)
      logger.error("gave up verifying report", fields.merging(["reason": .string(reason)]) { $1 })
      return
    case .giveUp: atMs = now + reports.policy.capMs
    case .retry(let at): atMs = at
    }
    try await reports.retryLater(report.id, error: reason, atMs: atMs, attempt: report.attempts)
    logger.info(
      "report still waiting on Apple",
      fields.merging([
        "reason": .string(reason), "retry_in_ms": .int(Int(atMs - now)),
      ]) { $1 })
  }
}
