import Foundation
import HTTP
import StorekeeperLogging

/// The fake App Store's handlers and the state they share. `FakeAppStoreServer` puts them on
/// sockets; `router` also runs in-process.
final class FakeAppStoreEndpoints: Sendable {
  let configuration: FakeAppStoreServer.Configuration
  let authority: FakeCertificateAuthority
  let store = FakeStore()
  let faults = FakeFaultSwitch()
  let hold = FakeHold()
  let outbox: FakeNotificationOutbox
  let signer: FakeNotificationSigner
  let apiKey: FakeAPIKey
  let serverAPI: FakeServerAPIControls
  let receiptContainers = FakeReceiptContainerCache()
  let consumptionLog = FakeConsumptionLog()

  init(
    configuration: FakeAppStoreServer.Configuration, authority: FakeCertificateAuthority,
    apiKey: FakeAPIKey
  ) {
    self.configuration = configuration
    self.authority = authority
    self.apiKey = apiKey
    serverAPI = FakeServerAPIControls(historyPageSize: configuration.transactionHistoryPageSize)
    signer = FakeNotificationSigner(authority: authority, appAppleId: configuration.appAppleId)
    outbox = FakeNotificationOutbox(
      delivery: FakeNotificationDelivery(), schedule: configuration.retrySchedule,
      logger: configuration.logger)
  }

  var logger: Logger { configuration.logger }

  func router() -> Router {
    var router = Router()
    router.add(.get, "/fake/v1/health") { _, _ in try FakeJSON.response(["status": "ok"]) }
    router.add(.get, "/fake/v1/root-certificate") { [self] _, _ in
      Response(
        headers: ["Content-Type": "application/x-pem-file"],
        body: Array(authority.rootCertificatePEM.utf8))
    }
    router.add(.post, "/fake/v1/purchases") { [self] request, _ in try purchase(request) }
    router.add(.post, "/fake/v1/restores") { [self] request, _ in try restore(request) }
    router.add(.get, "/fake/v1/transactions/{transaction_id}") { [self] _, context in
      try transaction(context.parameters["transaction_id"] ?? "")
    }
    router.add(.post, "/verifyReceipt") { [self] request, _ in
      try await verifyReceipt(request, endpoint: .production)
    }
    router.add(.post, "/sandbox/verifyReceipt") { [self] request, _ in
      try await verifyReceipt(request, endpoint: .sandbox)
    }
    // Apple answers a request that is not a POST with status 21000.
    for path in ["/verifyReceipt", "/sandbox/verifyReceipt"] {
      router.add(.get, path) { _, _ in try FakeJSON.response(FakeVerifyReceiptBody.status(21000)) }
    }
    router.add(.get, "/fake/v1/faults") { [self] _, _ in
      try FakeJSON.response(
        FakeFaultResponse(faults.peek(now: Self.now()), heldRequests: hold.activeCount))
    }
    router.add(.post, "/fake/v1/faults") { [self] request, _ in try setFault(request) }
    router.add(.post, "/fake/v1/refunds") { [self] request, _ in try await refund(request) }
    router.add(.post, "/fake/v1/renewals") { [self] request, _ in try await renew(request) }
    router.add(.post, "/fake/v1/notifications") { [self] request, _ in
      try await notification(request)
    }
    router.add(.get, "/fake/v1/notifications/{notification_uuid}") { [self] _, context in
      try notificationHistory(context.parameters["notification_uuid"] ?? "")
    }
    for (prefix, environment) in [("", "Production"), ("/sandbox", "Sandbox")] {
      router.add(.post, prefix + "/inApps/v1/notifications/history") { [self] request, _ in
        try notificationHistoryPage(request, environment: environment)
      }
    }
    registerServerAPITransactions(&router)
    registerAppAccountToken(&router)
    registerConsumption(&router)
    for (prefix, environment) in [("", "Production"), ("/sandbox", "Sandbox")] {
      router.add(.get, prefix + "/inApps/v1/subscriptions/{transaction_id}") {
        [self] request, context in
        try subscriptionStatuses(
          request, transactionId: context.parameters["transaction_id"] ?? "",
          environment: environment)
      }
    }
    router.add(.post, "/fake/v1/subscriptions/state") { [self] request, _ in
      try setSubscriptionState(request)
    }
    return router
  }

  /// Milliseconds since 1970, Apple's unit for every date.
  static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

  static func transactionNotFound(_ id: String) -> HTTPError {
    HTTPError(404, code: "transaction_not_found", detail: "No transaction \(id) in this fake.")
  }

  static func httpError(_ error: FakeStoreError) -> HTTPError {
    switch error {
    case .unknownTransaction(let id): transactionNotFound(id)
    case .notAutoRenewable(let id):
      HTTPError(
        422, code: "not_auto_renewable",
        detail: "Transaction \(id) is not an auto-renewable subscription.")
    case .notRestorable(let id):
      HTTPError(
        422, code: "not_restorable",
        detail: "Transaction \(id) is not a non-consumable purchase; only those are restored.")
    }
  }
}
