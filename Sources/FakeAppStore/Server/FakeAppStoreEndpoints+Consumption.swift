import AppStore
import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  /// Send Consumption Information v2, `PUT /inApps/v2/transactions/consumption/{transactionId}`,
  /// checked as Apple documents it: a bearer token this fake's key signed for the transaction's
  /// app and environment, `customerConsented` true (Apple refuses anything else),
  /// `deliveryStatus` one of Apple's five, `sampleContentProvided` a Boolean,
  /// `consumptionPercentage` 0-100,000 milliunits, 0 when not delivered and absent for an
  /// auto-renewable subscription, `refundPreference` one of Apple's three (`GRANT_PRORATED`
  /// needing a share above 0 for a one-time purchase), nothing else. 202 with no body, as
  /// Apple answers; Apple's error bodies otherwise. The error codes are the fake's own.
  func registerConsumption(_ router: inout Router) {
    for (prefix, environment) in [("", "Production"), ("/sandbox", "Sandbox")] {
      router.add(.put, prefix + "/inApps/v2/transactions/consumption/{transaction_id}") {
        [self] request, context in
        // A slow Apple, when a test asked for one: held before anything is checked.
        let held = consumptionLog.holdMilliseconds
        if held > 0 { await hold.wait(milliseconds: held) }
        return try consumption(
          request, transactionId: context.parameters["transaction_id"] ?? "",
          environment: environment)
      }
    }
    router.add(.get, "/fake/v1/consumption/{transaction_id}") { [self] _, context in
      let calls = consumptionLog.calls(transactionId: context.parameters["transaction_id"] ?? "")
      let list: [[String: Any]] = calls.map { call in
        var entry: [String: Any] = [
          "environment": call.environment, "status": call.status,
          "body": (try? JSONSerialization.jsonObject(with: Data(call.body.utf8))) ?? call.body,
        ]
        if let error = call.error { entry["error"] = error }
        return entry
      }
      return Response(
        headers: ["Content-Type": "application/json"],
        body: Array(
          try JSONSerialization.data(withJSONObject: ["calls": list], options: .sortedKeys)))
    }
    router.add(.post, "/fake/v1/consumption/faults") { [self] request, _ in
      let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
      if let held = body?["hold_ms"] {
        guard let milliseconds = (held as? NSNumber)?.intValue, (0...60_000).contains(milliseconds)
        else { throw FakeJSON.invalid("hold_ms", "must be 0 to 60000") }
        consumptionLog.holdMilliseconds = milliseconds
        return try FakeJSON.response(["hold_ms": milliseconds])
      }
      guard let count = (body?["fail_next"] as? NSNumber)?.intValue, (0...100).contains(count)
      else { throw FakeJSON.invalid("fail_next", "must be 0 to 100") }
      let status = (body?["status"] as? NSNumber)?.intValue ?? 503
      guard (400...599).contains(status) else {
        throw FakeJSON.invalid("status", "must be 400 to 599")
      }
      consumptionLog.fail(next: count, status: status)
      return try FakeJSON.response(["fail_next": count, "status": status])
    }
  }

  func consumption(_ request: Request, transactionId: String, environment: String) throws
    -> Response
  {
    let bundleId = try apiKey.authorize(request, nowSeconds: Self.now() / 1000)
    let body = String(decoding: request.body, as: UTF8.self)
    func answer(_ status: Int, code: Int, _ message: String) throws -> Response {
      consumptionLog.record(
        .init(
          transactionId: transactionId, environment: environment, body: body, status: status,
          error: message))
      return try Self.serverAPIError(status, code: code, message)
    }
    if let status = consumptionLog.takeFailure() {
      return try answer(status, code: status * 10_000 + 1, "Fault asked for by the test.")
    }
    guard let transaction = store.transaction(transactionId), transaction.bundleId == bundleId,
      transaction.environment == environment
    else { return try answer(404, code: 4_040_010, "Transaction id not found.") }
    guard let fields = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
    else { return try answer(400, code: 4_000_000, "The body is not a JSON object.") }
    let known: Set<String> = [
      "customerConsented", "deliveryStatus", "consumptionPercentage", "refundPreference",
      "sampleContentProvided",
    ]
    if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
      return try answer(400, code: 4_000_001, "Unknown field \(unknown).")
    }
    guard Self.isBool(fields["customerConsented"]), fields["customerConsented"] as? Bool == true
    else { return try answer(400, code: 4_000_101, "InvalidCustomerConsentedError") }
    guard let delivery = fields["deliveryStatus"] as? String,
      let status = ConsumptionInformation.DeliveryStatus(rawValue: delivery)
    else { return try answer(400, code: 4_000_102, "InvalidDeliveryStatusError") }
    guard Self.isBool(fields["sampleContentProvided"]) else {
      return try answer(400, code: 4_000_103, "InvalidSampleContentProvidedError")
    }
    var share: Int?
    if let value = fields["consumptionPercentage"] {
      guard let number = value as? NSNumber, !Self.isBool(value),
        number.doubleValue == number.doubleValue.rounded(),
        (0...Int(ConsumptionInformation.wholeMilliunits)).contains(number.intValue)
      else { return try answer(400, code: 4_000_104, "InvalidConsumptionPercentageError") }
      share = number.intValue
      if transaction.type == .autoRenewableSubscription {
        return try answer(
          400, code: 4_000_105, "ConsumptionPercentageAutoRenewableSubscriptionError")
      }
      if status != .delivered, number.intValue != 0 {
        return try answer(400, code: 4_000_106, "InvalidConsumptionPercentageError")
      }
    }
    if let value = fields["refundPreference"] {
      guard let text = value as? String,
        let preference = ConsumptionInformation.RefundPreference(rawValue: text)
      else { return try answer(400, code: 4_000_107, "InvalidRefundPreferenceError") }
      // Apple: GRANT_PRORATED needs a share above 0 and below 100000.
      if preference == .grantProrated, transaction.type != .autoRenewableSubscription,
        !(1..<Int(ConsumptionInformation.wholeMilliunits)).contains(share ?? 0)
      {
        return try answer(400, code: 4_000_108, "InvalidConsumptionPercentageError")
      }
    }
    consumptionLog.record(
      .init(
        transactionId: transactionId, environment: environment, body: body, status: 202,
        error: nil))
    return Response(status: 202, headers: [:], body: [])
  }

  /// JSONSerialization reads JSON true and false as NSNumber (of the boolean subclass, whose
  /// type is `c`): tell them from 0 and 1, which it reads as integers.
  static func isBool(_ value: Any?) -> Bool {
    guard let number = value as? NSNumber else { return false }
    return String(describing: type(of: number)).contains("Boolean")
      || String(cString: number.objCType) == "c"
  }
}
