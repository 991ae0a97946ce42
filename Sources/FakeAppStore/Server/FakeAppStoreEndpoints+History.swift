import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// `POST /inApps/v1/notifications/history[?paginationToken=…]`, as the App Store Server API
  /// answers it: the app's notifications first sent in [startDate, endDate) (milliseconds),
  /// only the undelivered ones with `onlyFailures`, a page at a time, each host its own
  /// environment's (`/sandbox` the sandbox's). Apple's JSON is camelCase.
  func notificationHistoryPage(_ request: Request, environment: String) throws -> Response {
    serverAPI.count(.notificationHistory)
    let bundleId = try apiKey.authorize(request, nowSeconds: Self.now() / 1000)
    if let limited = try rateLimited(.notificationHistory) { return limited }
    guard
      let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
      let start = (body["startDate"] as? NSNumber)?.int64Value,
      let end = (body["endDate"] as? NSNumber)?.int64Value, start < end
    else {
      return try Self.apiError(
        400, code: 4_000_000, "startDate and endDate (milliseconds, start first) are required")
    }
    let onlyFailures = body["onlyFailures"] as? Bool ?? false
    let offset =
      try request.query["paginationToken"].map { token -> Int in
        guard let offset = Int(token), offset >= 0 else {
          throw HTTPError(400, code: "invalid_pagination_token", detail: "Unknown paginationToken.")
        }
        return offset
      } ?? 0
    let records = outbox.history(
      bundleId: bundleId, environment: environment, startMs: start, endMs: end,
      onlyFailures: onlyFailures)
    let page = records.dropFirst(offset).prefix(
      serverAPI.notificationHistoryPageSize ?? configuration.historyPageSize)
    let next = offset + page.count
    var answer: [String: Any] = [
      "notificationHistory": page.map { record in
        [
          "signedPayload": record.signedPayload,
          "sendAttempts": record.attempts.map {
            ["attemptDate": $0.attemptDate, "sendAttemptResult": $0.sendAttemptResult.rawValue]
          },
        ] as [String: Any]
      },
      "hasMore": next < records.count,
    ]
    if next < records.count { answer["paginationToken"] = String(next) }
    return Response(
      headers: ["Content-Type": "application/json"],
      body: Array(try JSONSerialization.data(withJSONObject: answer, options: .sortedKeys)))
  }

  private static func apiError(_ status: Int, code: Int, _ message: String) throws -> Response {
    Response(
      status: status, headers: ["Content-Type": "application/json"],
      body: Array(
        try JSONSerialization.data(withJSONObject: ["errorCode": code, "errorMessage": message])))
  }
}
