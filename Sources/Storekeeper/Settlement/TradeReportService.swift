import AppStore
import HTTP
import StorekeeperLogging
import Postgres

/// `POST /v1/trade-reports`: the app says how a purchase ended; the server decides.
struct TradeReportService: Sendable {
  let database: PostgresPool
  let orders: OrderRepository
  let reports: ReportStore
  let verifier: ProofVerifier
  let settlement: SettlementService

  static let fields: Set<String> = [
    "trade_no", "trade_status", "receipt", "signed_transaction", "reason",
  ]
  static let closeReasons: Set<String> = ["cancelled", "failed"]

  func handle(_ request: Request, _ context: Context) async throws -> Response {
    var fields = try RequestFields(request: request, allowForm: true)
    fields.rejectUnknown(allowed: Self.fields)
    let tradeNo = fields.string("trade_no", required: true, maxLength: 64)
    if let tradeNo, !TradeNumber.isWellFormed(tradeNo) {
      fields.fail("trade_no", "is not a trade number")
    }
    let status = fields.string("trade_status", required: true, maxLength: 32)
    if let status, status != Order.tradeSuccess, status != Order.tradeClosed {
      fields.fail("trade_status", "must be TRADE_SUCCESS or TRADE_CLOSED")
    }
    let proof = Proof.read(&fields, required: status == Order.tradeSuccess)
    let reason = fields.string("reason", maxLength: 32)
    if status == Order.tradeClosed, let reason, !Self.closeReasons.contains(reason) {
      fields.fail("reason", "must be cancelled or failed")
    }
    try fields.validate()
    guard let tradeNo, let status else { throw HTTPError(400, code: "validation_failed") }
    guard let order = try await orders.find(tradeNo) else {
      throw HTTPError(404, code: "order_not_found", detail: "no order \(tradeNo)")
    }
    if status == Order.tradeClosed {
      return try await close(order, reason: reason ?? "cancelled", context)
    }
    guard let proof else { throw HTTPError(400, code: "validation_failed") }
    return try await paid(order, proof: proof, context)
  }

  private func paid(_ order: Order, proof: Proof, _ context: Context) async throws -> Response {
    if order.tradeStatus == Order.tradeSuccess,
      try await reports.alreadySettled(tradeNo: order.tradeNo, proof: proof)
    {
      let product = try await SettlementService.product(order.productId, on: database)
      return try JSONCoding.response(
        SettledOrder(
          order: order,
          delivery: Delivery(
            product: product, quantity: order.quantity, transactionId: order.transactionId)))
    }
    let reportId = try await reports.insertPending(
      tradeNo: order.tradeNo, userId: order.userId, productId: order.productId,
      tradeStatus: Order.tradeSuccess, proof: proof)
    switch await verifier.verify(proof) {
    case .valid(let transactions):
      let answer = try await settle(order, transactions, reportId: reportId, cause: "report")
      context.logger.notice(
        "order settled",
        [
          "trade_no": .string(order.tradeNo),
          "transaction_id": .string(answer.order.transactionId ?? ""),
        ])
      return try JSONCoding.response(answer)
    case .invalid(let reason):
      try await reports.finish(reportId, outcome: "invalid", code: reason)
      context.logger.warning(
        "invalid proof", ["trade_no": .string(order.tradeNo), "reason": .string(reason)])
      throw HTTPError(
        422, code: "invalid_proof", detail: "Apple's proof did not verify: \(reason)",
        fields: [FieldError(field: proof.field, message: reason)])
    case .retryable(let reason):
      try await reports.retryLater(reportId, error: reason, afterMs: reports.retryBaseMs)
      try await database.execute(
        "UPDATE orders SET verification = 'pending' WHERE trade_no = \(order.tradeNo) AND trade_status <> 'TRADE_SUCCESS'"
      )
      context.logger.warning(
        "verification postponed", ["trade_no": .string(order.tradeNo), "reason": .string(reason)])
      let current = try await orders.find(order.tradeNo) ?? order
      return try JSONCoding.response(
        PendingVerification(order: current, reportId: reportId), status: 202)
    }
  }

  /// Matches and settles; a definite refusal is recorded on the report before it is thrown.
  func settle(_ order: Order, _ transactions: [VerifiedTransaction], reportId: Int64, cause: String)
    async throws
    -> SettledOrder
  {
    do {
      let used = try await reports.usedElsewhere(
        transactions.map(\.transactionId), tradeNo: order.tradeNo)
      let transaction = try TransactionMatcher.match(order, in: transactions, usedElsewhere: used)
      return try await settlement.settle(
        tradeNo: order.tradeNo, transaction: transaction,
        source: transaction.type == nil ? "receipt" : "signed_transaction", cause: cause,
        reportId: reportId)
    } catch let error as HTTPError where error.status < 500 {
      try await reports.finish(reportId, outcome: "rejected", code: error.code)
      try await database.execute(
        "UPDATE orders SET verification = NULL WHERE trade_no = \(order.tradeNo) AND verification = 'pending'"
      )
      throw error
    }
  }

  private func close(_ order: Order, reason: String, _ context: Context) async throws -> Response {
    let closed: Order = try await database.withTransaction { tx in
      guard
        let current = try await tx.query(
          "SELECT \(unescaped: Order.columns) FROM orders WHERE trade_no = \(order.tradeNo) FOR UPDATE"
        ).first.map(Order.init(row:))
      else { throw HTTPError(404, code: "order_not_found") }
      switch current.tradeStatus {
      case Order.tradeSuccess:
        try await reports.insertFinal(
          tradeNo: current.tradeNo, tradeStatus: Order.tradeClosed, reason: reason,
          outcome: "rejected",
          code: "order_already_paid", on: tx)
        return current
      case Order.tradeClosed:
        try await reports.insertFinal(
          tradeNo: current.tradeNo, tradeStatus: Order.tradeClosed, reason: reason,
          outcome: "unchanged",
          code: nil, on: tx)
        return current
      default:
        let rows = try await tx.query(
          """
          UPDATE orders SET trade_status = 'TRADE_CLOSED', close_reason = \(reason), closed_at = now(),
            updated_at = now()
          WHERE trade_no = \(current.tradeNo) RETURNING \(unescaped: Order.columns)
          """)
        try await tx.execute(
          """
          INSERT INTO order_events (trade_no, from_status, to_status, reason, cause)
          VALUES (\(current.tradeNo), 'WAIT_BUYER_PAY', 'TRADE_CLOSED', \(reason), 'report')
          """)
        try await reports.insertFinal(
          tradeNo: current.tradeNo, tradeStatus: Order.tradeClosed, reason: reason,
          outcome: "closed",
          code: nil, on: tx)
        guard let row = rows.first else { throw HTTPError(500, code: "internal_error") }
        return try Order(row: row)
      }
    }
    if closed.tradeStatus == Order.tradeSuccess {
      throw HTTPError(
        409, code: "order_already_paid",
        detail: "order \(closed.tradeNo) is paid; a close report changes nothing")
    }
    context.logger.info(
      "order closed by report", ["trade_no": .string(closed.tradeNo), "reason": .string(reason)])
    struct Closed: Encodable { var order: Order }
    return try JSONCoding.response(Closed(order: closed))
  }
}
