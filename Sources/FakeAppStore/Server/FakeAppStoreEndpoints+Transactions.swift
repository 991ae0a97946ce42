import AppStore
import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// Get Transaction Info and Get Transaction History of the App Store Server API, as Apple
  /// serves them: production transactions at `/inApps/…`, sandbox ones at `/sandbox/inApps/…`
  /// (Apple's two hosts), only to bearer tokens this fake's key signed for the transaction's
  /// app; Apple's error bodies (`errorCode`, `errorMessage`). Faults set for verifyReceipt
  /// apply here too, so a test can take Apple down whichever path asks it.
  func registerServerAPITransactions(_ router: inout Router) {
    let hosts: [(String, AppStoreEnvironment)] = [("", .production), ("/sandbox", .sandbox)]
    for (prefix, environment) in hosts {
      router.add(.get, prefix + "/inApps/v1/transactions/{transaction_id}") {
        [self] request, context in
        try await transactionInfo(
          request, id: context.parameters["transaction_id"] ?? "", environment: environment)
      }
      router.add(.get, prefix + "/inApps/v2/history/{transaction_id}") {
        [self] request, context in
        try await transactionHistory(
          request, id: context.parameters["transaction_id"] ?? "", environment: environment)
      }
    }
    router.add(.get, "/fake/v1/calls") { [self] _, _ in
      Response(
        headers: ["Content-Type": "application/json"],
        body: Array(
          try JSONSerialization.data(withJSONObject: serverAPI.calls, options: .sortedKeys)))
    }
    router.add(.post, "/fake/v1/server-api") { [self] request, _ in
      let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
      let fields = ["transaction_history_page_size", "notification_history_page_size"]
      var sizes: [String: Int] = [:]
      for field in fields {
        guard let value = body?[field] else { continue }
        guard let size = (value as? NSNumber)?.intValue,
          FakeServerAPIControls.pageSizes.contains(size)
        else { throw FakeJSON.invalid(field, "must be 1 to 200") }
        sizes[field] = size
      }
      guard !sizes.isEmpty else {
        throw FakeJSON.invalid(
          "transaction_history_page_size", "or notification_history_page_size is required")
      }
      if let size = sizes[fields[0]] { serverAPI.historyPageSize = size }
      if let size = sizes[fields[1]] { serverAPI.notificationHistoryPageSize = size }
      return try FakeJSON.response(sizes)
    }
  }

  /// `GET /inApps/v1/transactions/{transactionId}`: `{"signedTransactionInfo": JWS}`.
  func transactionInfo(_ request: Request, id: String, environment: AppStoreEnvironment)
    async throws -> Response
  {
    serverAPI.count(.transactionInfo)
    let transaction: FakeTransaction
    switch try await lookup(request, id: id, environment: environment) {
    case .failure(let answer): return answer.response
    case .success(let found): transaction = found
    }
    let signed = try authority.sign(transaction.payload(signedDate: Self.now()))
    return try Self.json(["signedTransactionInfo": signed])
  }

  /// `GET /inApps/v2/history/{transactionId}[?revision=…&sort=ASCENDING|DESCENDING]`: the
  /// customer's transactions for the app in this environment, a page at a time; `revision`
  /// asks for the next page while `hasMore`. Apple's filters (`FakeHistoryFilter`) apply.
  func transactionHistory(_ request: Request, id: String, environment: AppStoreEnvironment)
    async throws -> Response
  {
    serverAPI.count(.transactionHistory)
    let transaction: FakeTransaction
    switch try await lookup(request, id: id, environment: environment) {
    case .failure(let answer): return answer.response
    case .success(let found): transaction = found
    }
    let offset: Int
    if let revision = request.query["revision"] {
      guard let value = Int(revision), value >= 0 else {
        return try Self.serverAPIError(400, code: 4_000_005, "Invalid revision.")
      }
      offset = value
    } else {
      offset = 0
    }
    let filter: FakeHistoryFilter
    switch FakeHistoryFilter.parse(target: request.target) {
    case .success(let parsed): filter = parsed
    case .failure(let refused):
      return try Self.serverAPIError(400, code: refused.answer.code, refused.answer.message)
    }
    // The Server API knows a purchase by its original transaction: StoreKit 1 restores are
    // not in the history.
    var history = (store.snapshot(receiptId: transaction.receiptId)?.transactions ?? [])
      .filter { !$0.isRestore && filter.admits($0) }
      .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    if request.query["sort"] == "DESCENDING" { history.reverse() }
    let now = Self.now()
    let page = history.dropFirst(offset).prefix(serverAPI.historyPageSize)
    let next = offset + page.count
    var answer: [String: Any] = [
      "revision": String(next), "hasMore": next < history.count,
      "bundleId": transaction.bundleId, "environment": environment.rawValue,
      "signedTransactions": try page.map { try authority.sign($0.payload(signedDate: now)) },
    ]
    if environment == .production { answer["appAppleId"] = configuration.appAppleId }
    return try Self.json(answer)
  }

  /// The transaction the path names, after the token, any fault and Apple's checks; or the
  /// answer Apple gives instead.
  private func lookup(_ request: Request, id: String, environment: AppStoreEnvironment)
    async throws -> Result<FakeTransaction, FakeAPIAnswer>
  {
    let bundleId = try apiKey.authorize(request, nowSeconds: Self.now() / 1000)
    let endpoint: FakeServerAPIControls.Endpoint =
      request.path.contains("/history/") ? .transactionHistory : .transactionInfo
    if let limited = try rateLimited(endpoint) { return .failure(FakeAPIAnswer(limited)) }
    let fault = try fault(for: request)
    switch fault.mode {
    case .none: break
    case .timeout: await hold.wait(milliseconds: fault.delayMilliseconds)
    case .http503:
      return .failure(
        FakeAPIAnswer(
          try Self.serverAPIError(503, code: 5_000_001, "Service unavailable, try again.")))
    case .status21005, .status21002, .retryable:
      return .failure(
        FakeAPIAnswer(try Self.serverAPIError(429, code: 4_290_000, "Rate limit exceeded.")))
    }
    guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      return .failure(
        FakeAPIAnswer(try Self.serverAPIError(400, code: 4_000_006, "Invalid transaction id.")))
    }
    // A StoreKit 1 restore's id is the receipt's alone; the Server API does not answer it.
    guard let transaction = store.transaction(id), !transaction.isRestore,
      transaction.bundleId == bundleId,
      transaction.environment == environment.rawValue
    else {
      return .failure(
        FakeAPIAnswer(try Self.serverAPIError(404, code: 4_040_010, "Transaction id not found.")))
    }
    return .success(transaction)
  }

  private static func json(_ object: [String: Any]) throws -> Response {
    Response(
      headers: ["Content-Type": "application/json"],
      body: Array(try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)))
  }

}
