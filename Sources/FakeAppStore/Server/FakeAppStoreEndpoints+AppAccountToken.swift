import AppStore
import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// Set App Account Token (`PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`,
  /// sandbox at `/sandbox/inApps/…`), as Apple answers it: a token this fake's key signed for the
  /// purchase's app, a body `{"appAccountToken": "<UUID>"}` (4000183 otherwise), an original
  /// transaction id (4000187 for a renewal's), a purchase of this environment (404, 4040010). The
  /// token then shows in every transaction and notification the fake signs for the purchase.
  func registerAppAccountToken(_ router: inout Router) {
    let hosts: [(String, AppStoreEnvironment)] = [("", .production), ("/sandbox", .sandbox)]
    for (prefix, environment) in hosts {
      router.add(.put, prefix + "/inApps/v1/transactions/{transaction_id}/appAccountToken") {
        [self] request, context in
        try setAppAccountToken(
          request, originalTransactionId: context.parameters["transaction_id"] ?? "",
          environment: environment)
      }
    }
    router.add(.post, "/fake/v1/rate-limit") { [self] request, _ in
      let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
      guard let count = (body?["count"] as? NSNumber)?.intValue, (0...1000).contains(count) else {
        throw FakeJSON.invalid("count", "must be 0 to 1000")
      }
      let retryAfter = (body?["retry_after_ms"] as? NSNumber)?.int64Value ?? 1000
      guard (0...3_600_000).contains(retryAfter) else {
        throw FakeJSON.invalid("retry_after_ms", "must be 0 to 3600000")
      }
      // `answer: account_not_found_retryable`: Apple's 404 that says "try again" (4040002),
      // as it answers while an account is still propagating after a purchase.
      let answer = body?["answer"] as? String ?? "rate_limited"
      guard ["rate_limited", "account_not_found_retryable"].contains(answer) else {
        throw FakeJSON.invalid("answer", "must be rate_limited or account_not_found_retryable")
      }
      serverAPI.rateLimit(
        count: count, retryAfterMs: retryAfter,
        accountNotFoundRetryable: answer == "account_not_found_retryable")
      struct Told: Encodable {
        var count: Int
        var retryAfterMs: Int64
        var answer: String
      }
      return try FakeJSON.response(Told(count: count, retryAfterMs: retryAfter, answer: answer))
    }
  }

  func setAppAccountToken(
    _ request: Request, originalTransactionId id: String, environment: AppStoreEnvironment
  ) throws -> Response {
    serverAPI.count(.setAppAccountToken)
    let bundleId = try apiKey.authorize(request, nowSeconds: Self.now() / 1000)
    if let limited = try rateLimited(.setAppAccountToken) { return limited }
    guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      return try Self.serverAPIError(400, code: 4_000_006, "Invalid transaction id.")
    }
    let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
    guard let text = body?["appAccountToken"] as? String, let uuid = UUID(uuidString: text) else {
      return try Self.serverAPIError(
        400, code: 4_000_183, "Invalid request. The app account token field must be a valid UUID.")
    }
    guard let transaction = store.transaction(id), transaction.bundleId == bundleId,
      transaction.environment == environment.rawValue
    else { return try Self.serverAPIError(404, code: 4_040_010, "Transaction id not found.") }
    guard transaction.ownership != .familyShared else {
      return try Self.serverAPIError(
        400, code: 4_000_185,
        "Invalid request. Family Sharing transactions aren't supported by this endpoint.")
    }
    guard transaction.originalTransactionId == transaction.transactionId else {
      return try Self.serverAPIError(
        400, code: 4_000_187,
        "Invalid request. The transaction id is not an original transaction id.")
    }
    let token = uuid.uuidString.lowercased()
    do {
      _ = try store.setAppAccountToken(token, originalTransactionId: id)
    } catch { throw Self.httpError(error) }
    logger.info(
      "app account token set",
      ["original_transaction_id": .string(id), "app_account_token": .string(token)])
    return Response(status: 200)
  }

  /// Apple's 429 with its `Retry-After` (UNIX milliseconds), while a test asked for it
  /// (`POST /fake/v1/rate-limit`).
  func rateLimited(_ endpoint: FakeServerAPIControls.Endpoint) throws -> Response? {
    guard let until = serverAPI.admit(endpoint, now: Self.now()) else { return nil }
    if serverAPI.answersAccountNotFound {
      return try Self.serverAPIError(404, code: 4_040_002, "Account not found. Please try again.")
    }
    var response = try Self.serverAPIError(429, code: 4_290_000, "Rate limit exceeded.")
    response.headers.add("Retry-After", String(until))
    logger.info(
      "rate limited", ["endpoint": .string(endpoint.rawValue), "until_ms": .int(Int(until))])
    return response
  }
}
