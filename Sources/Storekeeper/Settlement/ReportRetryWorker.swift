import AppStore
import HTTP
import StorekeeperLogging
import Postgres

/// Retries reports that wait on Apple, with exponential backoff, until Apple answers or the
/// retry window closes. Also finishes reports whose process died mid-verification (their lease
/// runs out and they become due again).
struct ReportRetryWorker: Sendable {
  let database: PostgresPool
  let reports: ReportStore
  let orders: OrderRepository
  let verifier: ProofVerifier
  let tradeReports: TradeReportService
  let receipts: ReceiptService
  let backoffBaseMs: Int64
  let logger: Logger

  static let maxBackoffMs: Int64 = 3_600_000

  func runOnce() async {
    do {
      while true {
        let due = try await reports.claimDue(limit: 20, backoffBaseMs: backoffBaseMs)
        if due.isEmpty { return }
        for report in due { await process(report) }
      }
    } catch {
      logger.warning("report retry pass failed", ["error": .string("\(error)")])
    }
  }

  func process(_ report: ReportStore.Due) async {
    let fields: [String: LogValue] = [
      "report_id": .int(Int(report.id)), "trade_no": .string(report.tradeNo ?? ""),
    ]
    do {
      switch await verifier.verify(report.proof) {
      case .valid(let transactions):
        if let tradeNo = report.tradeNo {
          guard let order = try await orders.find(tradeNo) else { return }
          do {
            _ = try await tradeReports.settle(
              order, transactions, reportId: report.id, cause: "retry_worker")
            logger.notice("pending report settled", fields)
          } catch let error as HTTPError {
            logger.warning(
              "pending report refused", fields.merging(["code": .string(error.code)]) { $1 })
          }
        } else {
          _ = try await receipts.apply(
            transactions, userId: report.userId, productId: report.productId)
          try await reports.finish(report.id, outcome: "settled", code: nil)
          logger.notice("pending receipt applied", fields)
        }
      case .invalid(let reason):
        try await reports.finish(report.id, outcome: "invalid", code: reason)
        if let tradeNo = report.tradeNo {
          try await database.execute(
            "UPDATE orders SET verification = NULL WHERE trade_no = \(tradeNo) AND verification = 'pending'"
          )
        }
        logger.warning("pending report invalid", fields.merging(["reason": .string(reason)]) { $1 })
      case .retryable(let reason):
        if report.givesUpSoon {
          try await giveUp(report, reason: reason)
          logger.error(
            "gave up verifying report", fields.merging(["reason": .string(reason)]) { $1 })
        } else {
          let exponent = Int64(min(max(report.attempts - 1, 0), 20))
          let delay = min(Self.maxBackoffMs, backoffBaseMs * (1 << exponent))
          try await reports.retryLater(report.id, error: reason, afterMs: delay)
          logger.info(
            "report still waiting on Apple",
            fields.merging(["reason": .string(reason), "retry_in_ms": .int(Int(delay))]) { $1 })
        }
      }
    } catch {
      logger.warning("report retry failed", fields.merging(["error": .string("\(error)")]) { $1 })
    }
  }

  private func giveUp(_ report: ReportStore.Due, reason: String) async throws {
    try await database.withTransaction { tx in
      try await tx.execute(
        """
        UPDATE trade_reports SET outcome = 'gave_up', outcome_code = \(reason), next_attempt_at = NULL,
          updated_at = now() WHERE id = \(report.id) AND outcome = 'pending'
        """)
      guard let tradeNo = report.tradeNo else { return }
      let rows = try await tx.query(
        """
        UPDATE orders SET verification = 'failed', updated_at = now()
        WHERE trade_no = \(tradeNo) AND trade_status <> 'TRADE_SUCCESS' RETURNING trade_status
        """)
      if let row = rows.first {
        let status: String = try row.decode("trade_status")
        try await tx.execute(
          """
          INSERT INTO order_events (trade_no, from_status, to_status, reason, cause, detail)
          VALUES (\(tradeNo), \(status), \(status), 'verification_gave_up', 'retry_worker',
                  jsonb_build_object('report_id', \(report.id)::bigint, 'last_error', \(reason)::text))
          """)
      }
    }
  }
}
