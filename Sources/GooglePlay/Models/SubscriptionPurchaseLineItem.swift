import Foundation

/// `SubscriptionPurchaseLineItem`: one product of a subscription purchase, with its plan.
public struct SubscriptionPurchaseLineItem: Sendable, Decodable, Equatable {
  public var productId: String?
  /// `google-datetime`: when this item's access ends (unless renewed).
  public var expiryTime: String?
  /// Exactly one of the two plans is set.
  public var autoRenewingPlan: AutoRenewingPlan?
  public var prepaidPlan: PrepaidPlan?
  public var offerDetails: OfferDetails?
  public var latestSuccessfulOrderId: String?

  public var expiryDate: Date? { GoogleDateTime.date(expiryTime) }

  public struct AutoRenewingPlan: Sendable, Decodable, Equatable {
    public var autoRenewEnabled: Bool?
    public var recurringPrice: Money?
  }

  public struct PrepaidPlan: Sendable, Decodable, Equatable {
    public var allowExtendAfterTime: String?
  }

  public struct OfferDetails: Sendable, Decodable, Equatable {
    public var basePlanId: String?
    public var offerId: String?
    public var offerTags: [String]?
  }
}

/// `Money` (google.type.Money): `units` is an int64 string.
public struct Money: Sendable, Decodable, Equatable {
  public var currencyCode: String?
  public var units: Int64?
  public var nanos: Int32?

  enum CodingKeys: String, CodingKey { case currencyCode, units, nanos }

  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    currencyCode = try c.decodeIfPresent(String.self, forKey: .currencyCode)
    units = try c.decodeInt64StringIfPresent(forKey: .units)
    nanos = try c.decodeIfPresent(Int32.self, forKey: .nanos)
  }
}
