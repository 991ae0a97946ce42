import Foundation
import JOSE

/// Reads a Pub/Sub push body (`{"message": {"data", "messageId", "attributes", "publishTime"},
/// "subscription"}`) and the `DeveloperNotification` its base64 `data` holds. Sizes are
/// bounded before anything is parsed; every refusal names what is wrong.
public enum PubSubPushDecoder {
  /// A notification is a few hundred bytes; the envelope adds little.
  public static let maxBodyBytes = 64 * 1024
  public static let maxDataBytes = 16 * 1024
  static let maxFieldLength = 4096

  public static func decode(_ body: [UInt8]) throws(PubSubPushError) -> PubSubPush {
    guard body.count <= maxBodyBytes else { throw .tooLarge(maxBodyBytes) }
    guard let root = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
      throw .notJSONObject("the push body")
    }
    guard let messageValue = root["message"] else { throw .missing("message") }
    guard let message = messageValue as? [String: Any] else { throw .notJSONObject("message") }
    let subscription = try string("subscription", root["subscription"])
    // Pub/Sub sends both spellings; either will do.
    let messageId = try string(
      "message.messageId", message["messageId"] ?? message["message_id"])
    let publishTime = try optionalString(
      "message.publishTime", message["publishTime"] ?? message["publish_time"])
    var attributes: [String: String] = [:]
    if let value = message["attributes"], !(value is NSNull) {
      guard let object = value as? [String: Any] else {
        throw .notJSONObject("message.attributes")
      }
      for (key, value) in object {
        attributes[key] = try string("message.attributes.\(key)", value)
      }
    }
    let dataText = try string("message.data", message["data"], limit: maxDataBytes * 2)
    guard let data = Base64URL.decodeStandard(dataText) else {
      throw .undecodableData("is not base64")
    }
    guard data.count <= maxDataBytes else {
      throw .undecodableData("is larger than \(maxDataBytes) bytes")
    }
    let notification = try developerNotification(data)
    return PubSubPush(
      messageId: messageId, subscription: subscription, publishTime: publishTime,
      attributes: attributes, notification: notification)
  }

  /// The decoded `data`: exactly one of the four notification kinds.
  public static func developerNotification(_ data: [UInt8]) throws(PubSubPushError)
    -> DeveloperNotification
  {
    guard let object = try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any] else {
      throw .notJSONObject("message.data")
    }
    let version = try string("version", object["version"])
    let packageName = try string("packageName", object["packageName"])
    let eventTime = try int64("eventTimeMillis", object["eventTimeMillis"])
    let kinds = [
      "oneTimeProductNotification", "subscriptionNotification", "voidedPurchaseNotification",
      "testNotification",
    ].filter { object[$0] != nil && !(object[$0] is NSNull) }
    guard kinds.count == 1, let kind = kinds.first else {
      throw .notificationKind(
        kinds.isEmpty ? "has none of the known kinds" : "has several kinds: \(kinds)")
    }
    guard let inner = object[kind] as? [String: Any] else { throw .notJSONObject(kind) }
    let content: DeveloperNotification.Content
    switch kind {
    case "oneTimeProductNotification":
      content = .oneTimeProduct(
        OneTimeProductNotification(
          version: try string("\(kind).version", inner["version"]),
          notificationType: try int("\(kind).notificationType", inner["notificationType"]),
          purchaseToken: try string("\(kind).purchaseToken", inner["purchaseToken"]),
          sku: try string("\(kind).sku", inner["sku"])))
    case "subscriptionNotification":
      content = .subscription(
        SubscriptionNotification(
          version: try string("\(kind).version", inner["version"]),
          notificationType: try int("\(kind).notificationType", inner["notificationType"]),
          purchaseToken: try string("\(kind).purchaseToken", inner["purchaseToken"]),
          subscriptionId: try optionalString("\(kind).subscriptionId", inner["subscriptionId"])))
    case "voidedPurchaseNotification":
      content = .voidedPurchase(
        VoidedPurchaseNotification(
          purchaseToken: try string("\(kind).purchaseToken", inner["purchaseToken"]),
          orderId: try orderId("\(kind).orderId", inner["orderId"]),
          productType: try int("\(kind).productType", inner["productType"]),
          refundType: try int("\(kind).refundType", inner["refundType"])))
    default:
      content = .test(version: try string("\(kind).version", inner["version"]))
    }
    return DeveloperNotification(
      version: version, packageName: packageName, eventTimeMillis: eventTime, content: content)
  }

  private static func string(_ field: String, _ value: Any?, limit: Int = maxFieldLength)
    throws(PubSubPushError) -> String
  {
    guard let value, !(value is NSNull) else { throw .missing(field) }
    guard let text = value as? String else { throw .invalid(field, "must be a string") }
    guard !text.isEmpty else { throw .invalid(field, "must not be empty") }
    guard text.utf8.count <= limit else { throw .invalid(field, "is longer than \(limit) bytes") }
    // PostgreSQL's text takes no NUL: refused here with its field, not as a failed insert
    // (a 500, which Pub/Sub would redeliver for a week).
    guard !text.utf8.contains(0) else { throw .invalid(field, "must not contain NUL") }
    return text
  }

  /// A void's order id: absent or empty for a purchase Google gave no order id (a promo
  /// code's), which is still voided by its token. Refusing the push would have Pub/Sub
  /// deliver it again for a week.
  private static func orderId(_ field: String, _ value: Any?) throws(PubSubPushError) -> String? {
    if let text = value as? String, text.isEmpty { return nil }
    return try optionalString(field, value)
  }

  private static func optionalString(_ field: String, _ value: Any?) throws(PubSubPushError)
    -> String?
  {
    guard let value, !(value is NSNull) else { return nil }
    return try string(field, value)
  }

  /// The last millisecond of 9999, beyond which PostgreSQL's timestamps (and any real event)
  /// do not go.
  public static let maxEventTimeMillis: Int64 = 253_402_300_799_999

  /// Google's example sends `eventTimeMillis` as a string; a number is taken too.
  private static func int64(_ field: String, _ value: Any?) throws(PubSubPushError) -> Int64 {
    guard let value, !(value is NSNull) else { throw .missing(field) }
    let parsed: Int64?
    if let text = value as? String {
      parsed = Int64(text)
    } else {
      parsed = JSONNumber.nonBoolean(value).flatMap { Int64(exactly: $0.doubleValue) }
    }
    guard let parsed, (0...maxEventTimeMillis).contains(parsed) else {
      throw .invalid(field, "must be milliseconds since 1970, before the year 10000")
    }
    return parsed
  }

  private static func int(_ field: String, _ value: Any?) throws(PubSubPushError) -> Int {
    guard let value, !(value is NSNull) else { throw .missing(field) }
    guard let number = JSONNumber.nonBoolean(value),
      let exact = Int(exactly: number.doubleValue), (0...10_000).contains(exact)
    else { throw .invalid(field, "must be a small integer") }
    return exact
  }
}
