import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// `GET /inApps/v1/subscriptions/{transactionId}` (Get All Subscription Statuses), as the App
  /// Store Server API answers it to a token the fake's key signed: the owner's subscriptions
  /// grouped by subscription group, each with its status and its latest transaction and
  /// renewal info signed afresh. Built from the fake's own state, so a change made with
  /// `deliver: false` or `POST /fake/v1/subscriptions/state` shows here without any notification.
  /// Production answers at `/inApps/…`, the sandbox at `/sandbox/inApps/…` (Apple's two hosts).
  func subscriptionStatuses(_ request: Request, transactionId: String, environment: String)
    throws -> Response
  {
    serverAPI.count(.subscriptionStatuses)
    let bundleId = try apiKey.authorize(request, nowSeconds: Self.now() / 1000)
    if let limited = try rateLimited(.subscriptionStatuses) { return limited }
    guard !transactionId.isEmpty, transactionId.count <= 64,
      transactionId.allSatisfy({ $0.isASCII && $0.isNumber })
    else { return try Self.serverAPIError(400, code: 4_000_006, "Invalid transaction id.") }
    guard let owner = store.subscriptionsOfOwner(of: transactionId), owner.bundleId == bundleId,
      owner.environment == environment
    else { return try Self.serverAPIError(404, code: 4_040_010, "Transaction id not found.") }
    let now = Self.now()
    var groups: [String: [[String: Any]]] = [:]
    var order: [String] = []
    for (subscription, latest) in owner.subscriptions {
      let group = latest.subscriptionGroupIdentifier ?? ""
      if groups[group] == nil { order.append(group) }
      groups[group, default: []].append([
        "originalTransactionId": subscription.originalTransactionId,
        "status": subscription.status(latest: latest, now: now),
        "signedTransactionInfo": try authority.sign(latest.payload(signedDate: now)),
        "signedRenewalInfo": try authority.sign(
          subscription.renewalInfo(latest: latest, signedDate: now)),
      ])
    }
    var answer: [String: Any] = [
      "environment": owner.environment, "bundleId": owner.bundleId,
      "data": order.map {
        ["subscriptionGroupIdentifier": $0, "lastTransactions": groups[$0] ?? []]
      },
    ]
    // Apple leaves appAppleId out of sandbox answers, as in notifications.
    if owner.environment == "Production" { answer["appAppleId"] = configuration.appAppleId }
    return Response(
      headers: ["Content-Type": "application/json"],
      body: Array(try JSONSerialization.data(withJSONObject: answer, options: .sortedKeys)))
  }

  /// Apple's error body: `errorCode` and `errorMessage`.
  static func serverAPIError(_ status: Int, code: Int, _ message: String) throws -> Response {
    Response(
      status: status, headers: ["Content-Type": "application/json"],
      body: Array(
        try JSONSerialization.data(withJSONObject: ["errorCode": code, "errorMessage": message])))
  }
}
