import HTTP
import StorekeeperCore
import StorekeeperLogging

/// After the purchase: reports about orders, and receipts without one. This is the edge:
/// requests are read and checked here, the domain decides, and its answers become responses.
package struct SettlementRoutes: Sendable {
  let processor: ReportProcessor
  let receipts: ReceiptService
  let auth: AppAuthenticator
  /// How the XML answers name products (`XML_PRODUCT_ID_PREFIX`).
  let ids: StoreKitProductIds

  package init(
    processor: ReportProcessor, receipts: ReceiptService, auth: AppAuthenticator,
    xmlProductIdPrefix: String = ""
  ) {
    self.processor = processor
    self.receipts = receipts
    self.auth = auth
    self.ids = StoreKitProductIds(prefix: xmlProductIdPrefix)
  }

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/trade-reports") { request, context in
      let caller = try await auth.caller(request, context)
      let report = try Self.tradeReport(request)
      switch try await processor.process(
        report, actingUser: caller.confinedTo, logger: context.logger)
      {
      case .settled(let settled): return JSONCoding.response(json: try settled.json())
      case .pending(let pending): return try JSONCoding.response(pending, status: 202)
      case .closed(let order):
        struct Closed: Encodable { var order: Order }
        return try JSONCoding.response(Closed(order: order))
      }
    }
    router.add(.post, "/v1/receipts") { request, context in
      try await receipt(request, context, ResponseFormat.preferred(request.headers["Accept"]))
    }
    // Seed 000's client posts to a fixed URL; this form answers XML whatever `Accept` says.
    router.add(.post, "/v1/receipts.xml") { request, context in
      try await receipt(request, context, .xml)
    }
  }

  /// A restore of either store. Seed 000's App Store client may ask for XML; Google Play's
  /// answers are JSON. Under `RECEIPTS_WITHOUT_SIGN_IN` a post without credentials comes from
  /// an anonymous caller, which `auth.user` lets make a userless App Store post only.
  private func receipt(_ request: Request, _ context: Context, _ format: ResponseFormat)
    async throws -> Response
  {
    let caller = try await auth.caller(request, context)
    if let google = try Self.googleReceipt(request) {
      return try await restoreGoogle(google, caller: caller, logger: context.logger)
    }
    var submission = try Self.receipt(request)
    submission.userId = try auth.user(caller, named: submission.userId)
    switch try await receipts.submit(submission, logger: context.logger) {
    case .applied(let outcome):
      return format == .xml
        ? try ReceiptXML.response(outcome, ids: ids)
        : try JSONCoding.response(ReceiptAnswer(outcome: outcome))
    case .pending(let reportId):
      if format == .xml { return ReceiptXML.pending(reportId: reportId) }
      return try JSONCoding.response(PendingReceipt(reportId: reportId), status: 202)
    }
  }

  static let tradeReportFields: Set<String> = [
    "trade_no", "trade_status", "receipt", "signed_transaction", "reason", "purchase_token",
  ]

  static func tradeReport(_ request: Request) throws -> TradeReport {
    var fields = try RequestFields(request: request, allowForm: true)
    fields.rejectUnknown(allowed: tradeReportFields)
    let tradeNo = fields.string("trade_no", required: true, maxLength: 64)
    if let tradeNo, !TradeNumber.isWellFormed(tradeNo) {
      fields.fail("trade_no", "is not a trade number")
    }
    let statusText = fields.string("trade_status", required: true, maxLength: 32)
    let status = statusText.flatMap(TradeStatus.init(rawValue:))
    if statusText != nil, status != .tradeSuccess, status != .tradeClosed {
      fields.fail("trade_status", "must be TRADE_SUCCESS or TRADE_CLOSED")
    }
    let proof = Proof.read(&fields, required: status == .tradeSuccess)
    let reasonText = fields.string("reason", maxLength: 32)
    let reason = reasonText.flatMap(CloseReason.init(rawValue:))
    if status == .tradeClosed, reasonText != nil,
      !TradeReport.deviceCloseReasons.contains(where: { $0 == reason })
    {
      fields.fail("reason", "must be cancelled or failed")
    }
    try fields.validate()
    switch (tradeNo, status, proof) {
    case (let tradeNo?, .tradeSuccess, let proof?): return .paid(tradeNo: tradeNo, proof: proof)
    case (let tradeNo?, .tradeClosed, _):
      return .closed(tradeNo: tradeNo, reason: reason ?? .cancelled)
    default: throw HTTPError(400, code: "validation_failed")
    }
  }

  static func receipt(_ request: Request) throws -> ReceiptService.Submission {
    var fields = try RequestFields(request: request, allowForm: true)
    fields.rejectUnknown(
      allowed: VerifyReceiptFields.names.union([
        "user_id", "receipt", "signed_transaction", "product_id", "id", "store",
      ]))
    if let store = fields.string("store", maxLength: 32), store != OrderStore.appStore.rawValue {
      fields.fail("store", "must be app_store or google_play")
    }
    let userId = fields.string("user_id", maxLength: 128)
    if let userId, !UserId.isValid(userId) {
      fields.fail("user_id", "must be 1-128 printable characters")
    }
    // Seed 000 names the product `id`.
    let productId =
      fields.string("product_id", maxLength: 100) ?? fields.string("id", maxLength: 100)
    if let productId, !ProductDraft.isValidProductId(productId) {
      fields.fail(fields.has("product_id") ? "product_id" : "id", "is not a valid product id")
    }
    // Apple's verifyReceipt body, as seeds 001 and 002 post it: `receipt-data` for `receipt`.
    VerifyReceiptFields.checkIgnored(&fields)
    let receiptField = VerifyReceiptFields.receiptField(&fields)
    let proof = Proof.read(&fields, required: true, receiptField: receiptField)
    try fields.validate()
    guard let proof else { throw HTTPError(400, code: "validation_failed") }
    return .init(userId: userId, productId: productId, proof: proof)
  }

  /// A Google Play restore as posted: `{"store": "google_play", "purchase_token",
  /// "product_id", "user_id"?}`; nil for any other receipt post.
  struct GoogleReceipt: Sendable {
    var userId: String?
    var productId: String
    var token: String
  }

  static func googleReceipt(_ request: Request) throws -> GoogleReceipt? {
    var fields = try RequestFields(request: request, allowForm: true)
    guard case .string(OrderStore.googlePlay.rawValue)? = fields.values["store"] else {
      return nil
    }
    fields.rejectUnknown(allowed: ["store", "user_id", "purchase_token", "product_id"])
    _ = fields.string("store", maxLength: 32)
    let userId = fields.string("user_id", maxLength: 128)
    if let userId, !UserId.isValid(userId) {
      fields.fail("user_id", "must be 1-128 printable characters")
    }
    let productId = fields.string("product_id", required: true, maxLength: 100)
    if let productId, !ProductDraft.isValidProductId(productId) {
      fields.fail("product_id", "is not a valid product id")
    }
    let token = fields.string(
      "purchase_token", required: true, maxLength: Proof.maxPurchaseTokenCharacters)
    let proof = token.flatMap { Proof.readToken($0, &fields) }
    try fields.validate()
    guard let productId, case .googlePurchase(let text)? = proof else {
      throw HTTPError(400, code: "validation_failed")
    }
    return GoogleReceipt(userId: userId, productId: productId, token: text)
  }

  private func restoreGoogle(_ post: GoogleReceipt, caller: Caller, logger: Logger) async throws
    -> Response
  {
    // A Google purchase is always someone's: a trusted caller names the user, and an anonymous
    // one cannot.
    if caller == .anonymous { throw AppAuthenticator.signInRequired }
    guard let google = processor.google else { throw GooglePlayOff().problem }
    guard let userId = try auth.user(caller, named: post.userId) else {
      throw HTTPError(
        400, code: "validation_failed", detail: "user_id is required",
        fields: [FieldError(field: "user_id", message: "is required")])
    }
    switch try await google.submit(
      userId: userId, productId: post.productId, token: post.token, gate: processor.gate,
      logger: logger)
    {
    case .applied(let outcome): return try JSONCoding.response(ReceiptAnswer(outcome: outcome))
    case .pending(let reportId):
      return try JSONCoding.response(PendingReceipt(reportId: reportId), status: 202)
    }
  }
}
