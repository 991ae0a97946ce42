/// An entry of the voided purchases list.
struct FakeVoided: Sendable {
  var packageName: String
  var token: String
  var orderId: String
  var purchaseTimeMillis: Int64
  var voidedTimeMillis: Int64
  var source: Int32
  var reason: Int32
  var quantity: Int32?
  var isSubscription: Bool

  /// `VoidedPurchase` as the Discovery document shapes it.
  var json: [String: Any] {
    var json: [String: Any] = [
      "kind": "androidpublisher#voidedPurchase", "purchaseToken": token, "orderId": orderId,
      "purchaseTimeMillis": String(purchaseTimeMillis),
      "voidedTimeMillis": String(voidedTimeMillis), "voidedSource": source,
      "voidedReason": reason,
    ]
    if let quantity { json["voidedQuantity"] = quantity }
    return json
  }
}
