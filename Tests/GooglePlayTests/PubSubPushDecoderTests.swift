import Foundation
import GooglePlay
import Testing

@Suite struct PubSubPushDecoderTests {
  static func push(_ notification: [String: Any], messageId: Any = "136969346945") throws -> [UInt8]
  {
    let data = try JSONSerialization.data(withJSONObject: notification).base64EncodedString()
    return [UInt8](
      try JSONSerialization.data(withJSONObject: [
        "message": [
          "attributes": ["key": "value"], "data": data, "messageId": messageId,
          "publishTime": "2024-05-01T12:00:00.123Z",
        ] as [String: Any],
        "subscription": "projects/myproject/subscriptions/mysubscription",
      ]))
  }

  static func notification(_ kind: String, _ content: [String: Any]) -> [String: Any] {
    [
      "version": "1.0", "packageName": "com.some.thing", "eventTimeMillis": "1503349566168",
      kind: content,
    ]
  }

  @Test func readsAOneTimeProductNotification() throws {
    for type in OneTimeProductNotificationType.allCases {
      let push = try PubSubPushDecoder.decode(
        try Self.push(
          Self.notification(
            "oneTimeProductNotification",
            [
              "version": "1.0", "notificationType": type.rawValue,
              "purchaseToken": "PURCHASE_TOKEN", "sku": "my.sku",
            ])))
      #expect(push.messageId == "136969346945")
      #expect(push.subscription == "projects/myproject/subscriptions/mysubscription")
      #expect(push.attributes == ["key": "value"])
      #expect(push.notification.packageName == "com.some.thing")
      #expect(push.notification.eventTimeMillis == 1_503_349_566_168)
      guard case .oneTimeProduct(let n) = push.notification.content else {
        Issue.record("\(push)")
        continue
      }
      #expect(n.type == type && n.sku == "my.sku" && n.purchaseToken == "PURCHASE_TOKEN")
    }
  }

  @Test func readsEverySubscriptionNotificationType() throws {
    for type in SubscriptionNotificationType.allCases {
      let push = try PubSubPushDecoder.decode(
        try Self.push(
          Self.notification(
            "subscriptionNotification",
            ["version": "1.0", "notificationType": type.rawValue, "purchaseToken": "T"])))
      guard case .subscription(let n) = push.notification.content else {
        Issue.record("\(push)")
        continue
      }
      #expect(n.type == type)
      #expect(push.notification.purchaseToken == "T")
    }
    #expect(
      SubscriptionNotificationType.allCases.map(\.rawValue) == [
        1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 17, 18, 19, 20, 22,
      ])
    // A code Google adds later still decodes; only its typed reading is nil.
    let later = try PubSubPushDecoder.decode(
      try Self.push(
        Self.notification(
          "subscriptionNotification",
          ["version": "1.0", "notificationType": 99, "purchaseToken": "T"])))
    if case .subscription(let n) = later.notification.content {
      #expect(n.type == nil)
    } else {
      Issue.record("kind")
    }
  }

  @Test func readsVoidedAndTestNotifications() throws {
    for product in VoidedProductType.allCases {
      for refund in VoidedRefundType.allCases {
        let push = try PubSubPushDecoder.decode(
          try Self.push(
            Self.notification(
              "voidedPurchaseNotification",
              [
                "purchaseToken": "T", "orderId": "GPA.1", "productType": product.rawValue,
                "refundType": refund.rawValue,
              ])))
        guard case .voidedPurchase(let n) = push.notification.content else {
          Issue.record("\(push)")
          continue
        }
        #expect(
          n.productTypeValue == product && n.refundTypeValue == refund && n.orderId == "GPA.1")
      }
    }
    // A promo code's purchase has no order id: the void still names its token, and refusing
    // it would have Pub/Sub deliver it again for a week.
    for orderId: Any in ["", NSNull()] {
      let push = try PubSubPushDecoder.decode(
        try Self.push(
          Self.notification(
            "voidedPurchaseNotification",
            ["purchaseToken": "T", "orderId": orderId, "productType": 2, "refundType": 1])))
      guard case .voidedPurchase(let n) = push.notification.content else {
        Issue.record("\(push)")
        continue
      }
      #expect(n.purchaseToken == "T" && n.orderId == nil)
    }
    let test = try PubSubPushDecoder.decode(
      try Self.push(Self.notification("testNotification", ["version": "1.0"])))
    #expect(test.notification.content == .test(version: "1.0"))
    #expect(test.notification.purchaseToken == nil)
  }

  @Test func refusesMalformedBodiesPrecisely() throws {
    let good = Self.notification("testNotification", ["version": "1.0"])
    #expect(throws: PubSubPushError.notJSONObject("the push body")) {
      try PubSubPushDecoder.decode(Array("[]".utf8))
    }
    #expect(throws: PubSubPushError.missing("message")) {
      try PubSubPushDecoder.decode(Array(#"{"subscription":"s"}"#.utf8))
    }
    #expect(throws: PubSubPushError.missing("message.data")) {
      try PubSubPushDecoder.decode(Array(#"{"subscription":"s","message":{"messageId":"1"}}"#.utf8))
    }
    #expect(throws: PubSubPushError.undecodableData("is not base64")) {
      try PubSubPushDecoder.decode(
        Array(#"{"subscription":"s","message":{"messageId":"1","data":"!!"}}"#.utf8))
    }
    #expect(throws: PubSubPushError.invalid("message.messageId", "must be a string")) {
      try PubSubPushDecoder.decode(try Self.push(good, messageId: 5))
    }
    #expect(throws: PubSubPushError.tooLarge(PubSubPushDecoder.maxBodyBytes)) {
      try PubSubPushDecoder.decode(
        [UInt8](repeating: 0x20, count: PubSubPushDecoder.maxBodyBytes + 1))
    }
    var two = good
    two["subscriptionNotification"] = [
      "version": "1.0", "notificationType": 2, "purchaseToken": "T",
    ]
    #expect(throws: PubSubPushError.self) { try PubSubPushDecoder.decode(try Self.push(two)) }
    var none = good
    none["testNotification"] = nil
    #expect(throws: PubSubPushError.notificationKind("has none of the known kinds")) {
      try PubSubPushDecoder.decode(try Self.push(none))
    }
    var noPackage = good
    noPackage["packageName"] = nil
    #expect(throws: PubSubPushError.missing("packageName")) {
      try PubSubPushDecoder.decode(try Self.push(noPackage))
    }
    #expect(
      throws: PubSubPushError.invalid(
        "subscriptionNotification.notificationType", "must be a small integer")
    ) {
      try PubSubPushDecoder.decode(
        try Self.push(
          Self.notification(
            "subscriptionNotification",
            ["version": "1.0", "notificationType": true, "purchaseToken": "T"])))
    }
    #expect(throws: PubSubPushError.missing("oneTimeProductNotification.sku")) {
      try PubSubPushDecoder.decode(
        try Self.push(
          Self.notification(
            "oneTimeProductNotification",
            ["version": "1.0", "notificationType": 1, "purchaseToken": "T"])))
    }
    // Times PostgreSQL cannot hold and NULs its text cannot are the push's fault (400), never
    // a failed insert (500, which Pub/Sub redelivers for a week).
    let timeRefused = PubSubPushError.invalid(
      "eventTimeMillis", "must be milliseconds since 1970, before the year 10000")
    for time in ["soon", "-1", "99999999999999999", "253402300800000"] as [Any]
      + [99_999_999_999_999_999 as Int64, 1.5]
    {
      var badTime = good
      badTime["eventTimeMillis"] = time
      #expect(throws: timeRefused, "\(time)") {
        try PubSubPushDecoder.decode(try Self.push(badTime))
      }
    }
    var lastTime = good
    lastTime["eventTimeMillis"] = "253402300799999"
    #expect(
      try PubSubPushDecoder.decode(try Self.push(lastTime)).notification.eventTimeMillis
        == PubSubPushDecoder.maxEventTimeMillis)
    #expect(throws: PubSubPushError.invalid("message.messageId", "must not contain NUL")) {
      try PubSubPushDecoder.decode(try Self.push(good, messageId: "1\u{0}2"))
    }
    #expect(
      throws: PubSubPushError.invalid(
        "voidedPurchaseNotification.purchaseToken", "must not contain NUL")
    ) {
      try PubSubPushDecoder.decode(
        try Self.push(
          Self.notification(
            "voidedPurchaseNotification",
            ["purchaseToken": "T\u{0}", "orderId": "GPA.1", "productType": 2, "refundType": 1])))
    }
  }
}
