import AppStore
import HTTP
import Postgres

/// `POST /v1/receipts`: a proof with no order named — seed 000's legacy post, a restore, or a
/// purchase whose order call was lost. Every transaction is recorded once; the user's open
/// orders settle; purchases without an order get one; a consumable is credited only the first
/// time its transaction is seen with an owner.
struct ReceiptService: Sendable {
  let database: PostgresPool
  let reports: ReportStore
  let verifier: ProofVerifier
  let settlement: SettlementService
  let entitlements: EntitlementRepository

  func handle(_ request: Request, _ context: Context) async throws -> Response {
    var fields = try RequestFields(request: request, allowForm: true)
    fields.rejectUnknown(allowed: ["user_id", "receipt", "signed_transaction", "product_id", "id"])
    let userId = fields.string("user_id", maxLength: 128)
    if let userId, !OrderService.isValidUserId(userId) {
      fields.fail("user_id", "must be 1-128 printable characters")
    }
    // Seed 000 names the product `id`.
    let productId =
      fields.string("product_id", maxLength: 100) ?? fields.string("id", maxLength: 100)
    if let productId, !ProductDraft.isValidProductId(productId) {
      fields.fail(fields.has("product_id") ? "product_id" : "id", "is not a valid product id")
    }
    let proof = Proof.read(&fields, required: true)
    try fields.validate()
    guard let proof else { throw HTTPError(400, code: "validation_failed") }

    let reportId = try await reports.insertPending(
      tradeNo: nil, userId: userId, productId: productId, tradeStatus: Order.tradeSuccess,
      proof: proof)
    switch await verifier.verify(proof) {
    case .valid(let transactions):
      let outcome = try await apply(transactions, userId: userId, productId: productId)
      try await reports.finish(reportId, outcome: "settled", code: nil)
      context.logger.notice(
        "receipt applied",
        ["user_id": .string(userId ?? ""), "transactions": .int(outcome.transactions.count)])
      return try JSONCoding.response(outcome)
    case .invalid(let reason):
      try await reports.finish(reportId, outcome: "invalid", code: reason)
      throw HTTPError(
        422, code: "invalid_proof", detail: "Apple's proof did not verify: \(reason)",
        fields: [FieldError(field: proof.field, message: reason)])
    case .retryable(let reason):
      try await reports.retryLater(reportId, error: reason, afterMs: reports.retryBaseMs)
      struct Pending: Encodable {
        var verification = "pending"
        var reportId: Int64
        enum CodingKeys: String, CodingKey {
          case verification
          case reportId = "report_id"
        }
      }
      return try JSONCoding.response(Pending(reportId: reportId), status: 202)
    }
  }

  func apply(_ transactions: [VerifiedTransaction], userId: String?, productId: String?)
    async throws
    -> ReceiptOutcome
  {
    var items: [ReceiptOutcome.Item] = []
    var delivery: [Delivery] = []
    for transaction in transactions.sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
      let (item, product, quantity) = try await database.withTransaction { tx in
        try await record(transaction, userId: userId, on: tx)
      }
      items.append(item)
      if let product, productId == nil || productId == product.productId,
        ["settled", "restored", "recorded"].contains(item.status)
      {
        delivery.append(
          Delivery(product: product, quantity: quantity, transactionId: transaction.transactionId))
      }
    }
    settlement.transactionRecorded()
    let view = try await userId.asyncMap { try await entitlements.view(userId: $0) }
    return ReceiptOutcome(transactions: items, entitlements: view, delivery: delivery)
  }

  private func record(
    _ transaction: VerifiedTransaction, userId: String?, on tx: PostgresTransaction
  ) async throws
    -> (ReceiptOutcome.Item, Product?, Int32)
  {
    var item = ReceiptOutcome.Item(
      transactionId: transaction.transactionId,
      originalTransactionId: transaction.originalTransactionId,
      productId: transaction.productId, status: "recorded", tradeNo: nil)
    guard
      let product = try await tx.query(
        "SELECT \(unescaped: Product.columns) FROM products WHERE product_id = \(transaction.productId)"
      ).first.map(Product.init(row:))
    else {
      item.status = "unknown_product"
      return (item, nil, 0)
    }
    let quantity = Int32(clamping: max(1, min(10, transaction.quantity)))
    let existing = try await TransactionRecord.insertOrLock(
      transaction, source: transaction.type == nil ? "receipt" : "signed_transaction", on: tx)
    if transaction.revocationDate != nil {
      item.status = "revoked"
      item.tradeNo = existing?.tradeNo
      return (item, product, quantity)
    }
    if let owner = existing?.userId {
      item.tradeNo = existing?.tradeNo
      item.status = owner == userId ? "restored" : "owned_by_another_user"
      return (item, product, quantity)
    }
    guard let userId else { return (item, product, quantity) }
    let tradeNo = try await openOrder(for: transaction, userId: userId, product: product, on: tx)
    let settled = try await settlement.settle(
      tradeNo: tradeNo, transaction: transaction, source: "receipt", cause: "receipt",
      reportId: nil, on: tx)
    item.status = "settled"
    item.tradeNo = settled.order.tradeNo
    return (item, product, settled.order.quantity)
  }

  /// The user's unpaid order this purchase pays (by app_account_token first), or a new order
  /// marked `origin = 'receipt'`.
  private func openOrder(
    for transaction: VerifiedTransaction, userId: String, product: Product,
    on tx: PostgresTransaction
  ) async throws -> String {
    let token = TransactionRecord.validToken(transaction.appAccountToken)
    let rows = try await tx.query(
      """
      SELECT trade_no FROM orders
      WHERE user_id = \(userId) AND product_id = \(product.productId) AND trade_status <> 'TRADE_SUCCESS'
        AND (close_reason IS NULL OR close_reason IN ('expired', 'cancelled', 'failed'))
        AND quantity = \(transaction.quantity)
        AND (\(token)::uuid IS NULL OR app_account_token = \(token)::uuid)
      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
      """)
    if let row = rows.first { return try row.decode("trade_no") }
    let tradeNo = TradeNumber.make()
    let quantity = Int32(clamping: max(1, min(10, transaction.quantity)))
    try await tx.execute(
      """
      INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                          app_account_token, trade_status, origin, expires_at)
      SELECT \(tradeNo), \(userId), product_id, \(quantity)::int, price, currency, price * \(quantity)::int,
             gen_random_uuid(), 'WAIT_BUYER_PAY', 'receipt', now()
      FROM products WHERE product_id = \(product.productId)
      """)
    try await tx.execute(
      """
      INSERT INTO order_events (trade_no, to_status, reason, cause)
      VALUES (\(tradeNo), 'WAIT_BUYER_PAY', 'created_for_receipt', 'receipt')
      """)
    return tradeNo
  }
}

extension Optional {
  func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
    guard let value = self else { return nil }
    return try await transform(value)
  }
}
