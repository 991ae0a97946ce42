import Foundation

/// `Order` of the Orders API (`orders.get`): what the buyer paid for one order, which
/// `purchases.products.get` and `subscriptionsv2.get` do not say. Only the fields Storekeeper
/// reads.
public struct GoogleOrder: Sendable, Decodable, Equatable {
  public var orderId: String?
  public var purchaseToken: String?
  /// `STATE_UNSPECIFIED`, `PENDING`, `PROCESSED`, `CANCELED`, `PENDING_REFUND`,
  /// `PARTIALLY_REFUNDED`, `REFUNDED`.
  public var state: String?
  /// `google-datetime`.
  public var createTime: String?
  /// The final amount the buyer paid, discounts and taxes included.
  public var total: Money?

  public var createDate: Date? { GoogleDateTime.date(createTime) }
}
