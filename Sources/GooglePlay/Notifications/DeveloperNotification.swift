/// A Real-time developer notification (the `data` of a Pub/Sub push, decoded). It says only
/// *that* a purchase changed: the state is read back from the API.
public struct DeveloperNotification: Sendable, Equatable {
  /// "1.0".
  public var version: String
  public var packageName: String
  public var eventTimeMillis: Int64
  public var content: Content

  public enum Content: Sendable, Equatable {
    case oneTimeProduct(OneTimeProductNotification)
    case subscription(SubscriptionNotification)
    case voidedPurchase(VoidedPurchaseNotification)
    case test(version: String)
  }

  /// The purchase it is about; nil for a test notification.
  public var purchaseToken: String? {
    switch content {
    case .oneTimeProduct(let n): n.purchaseToken
    case .subscription(let n): n.purchaseToken
    case .voidedPurchase(let n): n.purchaseToken
    case .test: nil
    }
  }
}

/// `oneTimeProductNotification`. The code is kept raw so a type added later still decodes.
public struct OneTimeProductNotification: Sendable, Equatable {
  public var version: String
  public var notificationType: Int
  public var purchaseToken: String
  /// The product id.
  public var sku: String

  public var type: OneTimeProductNotificationType? {
    OneTimeProductNotificationType(rawValue: notificationType)
  }
}

/// `subscriptionNotification`. `subscriptionId` is absent in newer notifications: the product
/// ids are in the line items `subscriptionsv2.get` returns.
public struct SubscriptionNotification: Sendable, Equatable {
  public var version: String
  public var notificationType: Int
  public var purchaseToken: String
  public var subscriptionId: String?

  public var type: SubscriptionNotificationType? {
    SubscriptionNotificationType(rawValue: notificationType)
  }
}

/// `voidedPurchaseNotification`: a purchase refunded, charged back or revoked.
public struct VoidedPurchaseNotification: Sendable, Equatable {
  public var purchaseToken: String
  /// Absent for a purchase Google gave no order id (a promo code's).
  public var orderId: String?
  public var productType: Int
  public var refundType: Int

  public var productTypeValue: VoidedProductType? { VoidedProductType(rawValue: productType) }
  public var refundTypeValue: VoidedRefundType? { VoidedRefundType(rawValue: refundType) }
}
