import Foundation
import GooglePlay

/// A subscription purchase as the fake holds it: one line item, auto-renewing.
struct FakeSubscription: Sendable {
  enum Cancellation: String, Sendable {
    case user, system, developer, replacement
  }

  var packageName: String
  var token: String
  var productId: String
  var basePlanId: String
  var offerId: String?
  var state: SubscriptionState
  var startTimeMillis: Int64
  var expiryTimeMillis: Int64
  var periodMillis: Int64
  var autoRenewEnabled = true
  var acknowledged = false
  var test: Bool
  var linkedPurchaseToken: String?
  var obfuscatedExternalAccountId: String?
  var regionCode: String
  /// `GPA.…` of the first order; renewals add `..0`, `..1`, …
  var orderBase: String
  var renewals = 0
  var autoResumeMillis: Int64?
  var cancellation: Cancellation?
  var cancelTimeMillis: Int64?
  var priceUnits: Int64 = 4
  var priceNanos: Int32 = 990_000_000
  var currency = "USD"

  var latestOrderId: String { renewals == 0 ? orderBase : "\(orderBase)..\(renewals - 1)" }

  /// `SubscriptionPurchaseV2` as the Discovery document shapes it.
  var json: [String: Any] {
    var item: [String: Any] = [
      "productId": productId, "expiryTime": Self.time(expiryTimeMillis),
      "autoRenewingPlan": [
        "autoRenewEnabled": autoRenewEnabled,
        "recurringPrice": FakeOrder.money(
          priceUnits * 1_000_000 + Int64(priceNanos / 1000), currency),
      ] as [String: Any],
      "offerDetails": [
        "basePlanId": basePlanId, "offerTags": [String](),
      ].merging(offerId.map { ["offerId": $0] } ?? [:]) { a, _ in a },
    ]
    if state != .pending { item["latestSuccessfulOrderId"] = latestOrderId }
    var json: [String: Any] = [
      "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": regionCode,
      "startTime": Self.time(startTimeMillis), "subscriptionState": state.rawValue,
      "acknowledgementState": acknowledged
        ? SubscriptionAcknowledgementState.acknowledged.rawValue
        : SubscriptionAcknowledgementState.pending.rawValue,
      "lineItems": [item],
    ]
    if let linkedPurchaseToken { json["linkedPurchaseToken"] = linkedPurchaseToken }
    if let obfuscatedExternalAccountId {
      json["externalAccountIdentifiers"] = [
        "obfuscatedExternalAccountId": obfuscatedExternalAccountId
      ]
    }
    if test { json["testPurchase"] = [String: Any]() }
    if state == .paused, let autoResumeMillis {
      json["pausedStateContext"] = ["autoResumeTime": Self.time(autoResumeMillis)]
    }
    if let cancellation {
      switch cancellation {
      case .user:
        var user: [String: Any] = [:]
        if let cancelTimeMillis { user["cancelTime"] = Self.time(cancelTimeMillis) }
        json["canceledStateContext"] = ["userInitiatedCancellation": user]
      case .system: json["canceledStateContext"] = ["systemInitiatedCancellation": [:]]
      case .developer: json["canceledStateContext"] = ["developerInitiatedCancellation": [:]]
      case .replacement: json["canceledStateContext"] = ["replacementCancellation": [:]]
      }
    }
    return json
  }

  /// RFC 3339 in UTC with milliseconds, as Google writes `google-datetime`.
  static func time(_ millis: Int64) -> String {
    Date(timeIntervalSince1970: Double(millis) / 1000).formatted(
      Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}
