/// An order the fake charged: a one-time purchase's, or a subscription's first or renewal
/// order, as the Orders API (`orders.get`) describes it.
struct FakeOrder: Sendable {
  enum Line: Sendable {
    case oneTime(quantity: Int32)
    case subscription(basePlanId: String, startMillis: Int64, endMillis: Int64)
  }

  var packageName: String
  var orderId: String
  var token: String
  var productId: String
  var createTimeMillis: Int64
  var lastEventTimeMillis: Int64
  /// What the buyer paid, in micros.
  var totalMicros: Int64
  var currency: String
  var line: Line
  /// `PROCESSED`, `PARTIALLY_REFUNDED` or `REFUNDED`.
  var state = "PROCESSED"
  /// The pricing phase a subscription order funds: `BASE`, or `FREE_TRIAL` for a trial's.
  var offerPhase = "BASE"

  /// `Order` as the Discovery document shapes it (int64 fields as strings).
  var json: [String: Any] {
    let total = Self.money(totalMicros, currency)
    var item: [String: Any] = [
      "productId": productId, "productTitle": productId, "total": total,
      "tax": Self.money(0, currency), "listingPrice": total,
    ]
    switch line {
    case .oneTime(let quantity):
      item["oneTimePurchaseDetails"] = ["quantity": quantity]
    case .subscription(let basePlanId, let start, let end):
      item["subscriptionDetails"] = [
        "basePlanId": basePlanId, "offerPhase": offerPhase,
        "servicePeriodStartTime": FakeSubscription.time(start),
        "servicePeriodEndTime": FakeSubscription.time(end),
      ]
    }
    return [
      "orderId": orderId, "purchaseToken": token, "state": state,
      "createTime": FakeSubscription.time(createTimeMillis),
      "lastEventTime": FakeSubscription.time(lastEventTimeMillis),
      "total": total, "tax": Self.money(0, currency), "lineItems": [item],
      "salesChannel": "IN_APP", "orderDetails": ["taxInclusive": true],
    ]
  }

  /// `google.type.Money` as Google's JSON writes it: proto3 leaves out a field whose value is
  /// zero, so $0.99 has no `units` and a free trial's total is a currency alone.
  static func money(_ micros: Int64, _ currency: String) -> [String: Any] {
    var money: [String: Any] = ["currencyCode": currency]
    if micros / 1_000_000 != 0 { money["units"] = String(micros / 1_000_000) }
    if micros % 1_000_000 != 0 { money["nanos"] = Int32(micros % 1_000_000) * 1000 }
    return money
  }
}
