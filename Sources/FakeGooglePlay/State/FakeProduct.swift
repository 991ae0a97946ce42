/// A one-time product purchase as the fake holds it.
struct FakeProduct: Sendable {
  enum State: Int32, Sendable {
    case purchased = 0
    case canceled = 1
    case pending = 2
  }

  var packageName: String
  var productId: String
  var token: String
  var orderId: String
  var state: State
  var consumed = false
  var acknowledged = false
  var developerPayload = ""
  var purchaseTimeMillis: Int64
  /// When it became purchased (a pending one later): the three days count from here.
  var purchasedAtMillis: Int64?
  var test: Bool
  var quantity: Int32
  var refundableQuantity: Int32
  var obfuscatedExternalAccountId: String?
  var regionCode: String

  /// `ProductPurchase` as the Discovery document shapes it (int64 fields as strings).
  var json: [String: Any] {
    var json: [String: Any] = [
      "kind": "androidpublisher#productPurchase", "productId": productId,
      "purchaseTimeMillis": String(purchaseTimeMillis), "purchaseState": state.rawValue,
      "consumptionState": consumed ? 1 : 0, "developerPayload": developerPayload,
      "acknowledgementState": acknowledged ? 1 : 0,
      "regionCode": regionCode, "quantity": quantity, "refundableQuantity": refundableQuantity,
    ]
    if !orderId.isEmpty { json["orderId"] = orderId }
    if test { json["purchaseType"] = 0 }
    if let obfuscatedExternalAccountId {
      json["obfuscatedExternalAccountId"] = obfuscatedExternalAccountId
    }
    return json
  }

  /// `ProductPurchaseV2`, as much of it as the fake keeps.
  var jsonV2: [String: Any] {
    var json: [String: Any] = [
      "kind": "androidpublisher#productPurchaseV2", "regionCode": regionCode,
      "acknowledgementState": acknowledged
        ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING",
    ]
    if !orderId.isEmpty { json["orderId"] = orderId }
    if let purchasedAtMillis {
      json["purchaseCompletionTime"] = FakeSubscription.time(purchasedAtMillis)
    }
    if let obfuscatedExternalAccountId {
      json["obfuscatedExternalAccountId"] = obfuscatedExternalAccountId
    }
    return json
  }
}
