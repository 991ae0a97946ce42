import AppStore
import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// `POST /verifyReceipt` and `POST /sandbox/verifyReceipt`: Apple's JSON shape and status
  /// codes, after any fault the test asked for (`X-Fake-Fault` header, else the fault set
  /// with `POST /fake/v1/faults`).
  func verifyReceipt(_ request: Request, endpoint: AppStoreEnvironment) async throws -> Response {
    serverAPI.count(.verifyReceipt)
    let fault = try fault(for: request)
    switch fault.mode {
    case .none:
      break
    case .timeout:
      logger.info("verifyReceipt fault: holding", ["delay_ms": .int(fault.delayMilliseconds)])
      await hold.wait(milliseconds: fault.delayMilliseconds)
    case .http503:
      var response = Response.text("Service Unavailable\n", status: 503)
      response.headers.add("Retry-After", "1")
      return response
    case .status21005:
      return try FakeJSON.response(
        FakeVerifyReceiptBody.status(21005, environment: endpoint.rawValue, retryable: true))
    case .status21002:
      return try FakeJSON.response(FakeVerifyReceiptBody.status(21002))
    case .retryable:
      return try FakeJSON.response(
        FakeVerifyReceiptBody.status(21199, environment: endpoint.rawValue, retryable: true))
    }
    let body = request.body
    let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    let data = object?["receipt-data"] as? String
    if let object, let id = data.flatMap(FakeTransactionReceipt.transactionId(fromBase64:)) {
      return try transactionAnswer(object, transactionId: id, endpoint: endpoint)
    }
    let answer = answer(body, endpoint: endpoint)
    logger.info(
      "verifyReceipt",
      ["endpoint": .string(endpoint.rawValue), "status": .int(answer.status)])
    return try FakeJSON.response(answer)
  }

  /// Apple's answer to an iOS 6-style transaction receipt (see `FakeTransactionReceiptBody`).
  private func transactionAnswer(
    _ object: [String: Any], transactionId: String, endpoint: AppStoreEnvironment
  ) throws -> Response {
    guard let snapshot = store.transactionSnapshot(transactionId) else {
      return try FakeJSON.response(FakeVerifyReceiptBody.status(21002))
    }
    let transaction = snapshot.transaction
    if let status = refusal(
      object, environment: transaction.environment, endpoint: endpoint,
      hasSubscriptions: transaction.isAutoRenewable)
    {
      logger.info(
        "verifyReceipt",
        ["endpoint": .string(endpoint.rawValue), "status": .int(status), "style": "transaction"])
      return try FakeJSON.response(FakeVerifyReceiptBody.status(status))
    }
    func legacy(_ transaction: FakeTransaction) -> FakeLegacyTransaction {
      FakeLegacyTransaction(
        transaction, appleAccount: snapshot.appleAccount, appAppleId: configuration.appAppleId)
    }
    var body = FakeTransactionReceiptBody(
      status: 0, environment: transaction.environment == "Production" ? nil : "Sandbox",
      receipt: legacy(transaction))
    if let (subscription, latest) = snapshot.subscription {
      body.latestReceipt = FakeTransactionReceipt.base64(transactionId: latest.transactionId)
      body.autoRenewStatus = subscription.autoRenewStatus
      body.autoRenewProductId = subscription.productId
      if let expires = latest.expiresDate, expires <= Self.now() {
        // Apple's 21006: valid, but the subscription has expired; the receipt still decoded.
        body.status = 21006
        body.latestExpiredReceiptInfo = legacy(latest)
      } else {
        body.latestReceiptInfo = legacy(latest)
      }
    }
    logger.info(
      "verifyReceipt",
      ["endpoint": .string(endpoint.rawValue), "status": .int(body.status), "style": "transaction"])
    return try FakeJSON.response(body)
  }

  /// Apple's refusals that do not depend on the receipt's format: the wrong endpoint, a receipt
  /// Apple cannot authenticate, the shared secret.
  private func refusal(
    _ object: [String: Any], environment: String, endpoint: AppStoreEnvironment,
    hasSubscriptions: Bool
  ) -> Int? {
    switch (environment, endpoint) {
    case ("Sandbox", .production): return 21007
    case ("Production", .sandbox): return 21008
    // A StoreKit-testing receipt is signed on the Mac; Apple cannot authenticate it.
    case ("Xcode", _): return 21003
    default: break
    }
    if let secret = configuration.sharedSecret {
      let password = object["password"] as? String
      if let password, password != secret { return 21004 }
      if password == nil, hasSubscriptions { return 21004 }
    }
    return nil
  }

  func fault(for request: Request) throws -> FakeFault {
    guard let header = request.headers["X-Fake-Fault"] else { return faults.take(now: Self.now()) }
    let name = header.trimmingCharacters(in: .whitespaces)
    guard let mode = FakeFaultMode(rawValue: name) else {
      throw HTTPError(
        400, code: "unknown_fault",
        detail: "X-Fake-Fault must be one of "
          + FakeFaultMode.allCases.map(\.rawValue).joined(separator: ", ") + ".")
    }
    let delay = request.headers["X-Fake-Delay-Ms"].flatMap { Int($0) }
    return FakeFault(
      mode: mode, remainingCount: nil, expiresAt: nil,
      delayMilliseconds: max(0, delay ?? FakeFault.defaultDelayMilliseconds))
  }

  /// What Apple answers for this body at this endpoint.
  private func answer(_ body: [UInt8], endpoint: AppStoreEnvironment) -> FakeVerifyReceiptBody {
    guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
      let data = object["receipt-data"] as? String,
      let receiptId = FakeReceipt.id(fromBase64: data) ?? containerReceiptId(data),
      let snapshot = store.snapshot(receiptId: receiptId)
    else { return .status(21002) }
    if let status = refusal(
      object, environment: snapshot.receipt.environment, endpoint: endpoint,
      hasSubscriptions: snapshot.transactions.contains(where: \.isAutoRenewable))
    {
      return .status(status)
    }
    let excludeOld = (object["exclude-old-transactions"] as? Bool) ?? false
    return success(snapshot, excludeOld: excludeOld)
  }

  private func success(_ snapshot: FakeStore.ReceiptSnapshot, excludeOld: Bool)
    -> FakeVerifyReceiptBody
  {
    let receipt = snapshot.receipt
    let entries = snapshot.transactions.map(FakeReceiptEntry.init)
    var body = FakeVerifyReceiptBody(status: 0, environment: receipt.environment)
    body.receipt = FakeReceiptBody(
      receipt, appAppleId: configuration.appAppleId, entries: entries, now: Self.now())
    body.latestReceipt =
      (try? receiptContainers.base64(
        receipt, transactions: snapshot.transactions, authority: authority)) ?? receipt.base64
    if !snapshot.subscriptions.isEmpty {
      // Newest first, as Apple sorts it; only each subscription's latest when asked.
      let subscriptionTransactions =
        excludeOld
        ? snapshot.subscriptions.map(\.latest)
        : snapshot.transactions.filter(\.isAutoRenewable)
      body.latestReceiptInfo =
        subscriptionTransactions
        .sorted {
          // Ids grow within a process: they order periods bought in the same millisecond.
          ($0.purchaseDate, $0.transactionId.count, $0.transactionId)
            > ($1.purchaseDate, $1.transactionId.count, $1.transactionId)
        }
        .map(FakeReceiptEntry.init)
      body.pendingRenewalInfo = snapshot.subscriptions.map { FakePendingRenewal($0.subscription) }
    }
    return body
  }

  /// The account receipt a PKCS#7 app receipt belongs to: the one holding the transactions it
  /// lists, for the app it names.
  private func containerReceiptId(_ base64: String) -> String? {
    guard let contents = AppReceiptReader.read(base64: base64),
      let first = contents.transactionIds.first, let transaction = store.transaction(first),
      transaction.bundleId == contents.bundleId
    else { return nil }
    return transaction.receiptId
  }
}
