/// The body of Send Consumption Information (`ConsumptionRequest` in Apple's App Store Server
/// API 1.19): what the developer tells Apple about a purchase the customer asked to have
/// refunded. Apple refuses any `customerConsented` but `true` (400
/// InvalidCustomerConsentedError), so without the customer's consent nothing is sent at all.
public struct ConsumptionInformation: Sendable, Equatable, Codable {
  /// `deliveryStatus`: whether the app delivered a working purchase.
  public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    case delivered = "DELIVERED"
    case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
    case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
    case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
    case undeliveredOther = "UNDELIVERED_OTHER"
  }

  /// `refundPreference`: the outcome the developer prefers (one factor of Apple's decision).
  public enum RefundPreference: String, Sendable, Codable, CaseIterable {
    case decline = "DECLINE"
    case grantFull = "GRANT_FULL"
    case grantProrated = "GRANT_PRORATED"
  }

  /// The most `consumptionPercentage` can be: 100% in milliunits.
  public static let wholeMilliunits: Int32 = 100_000

  /// Always true when sent (see the type's comment).
  public var customerConsented: Bool
  public var deliveryStatus: DeliveryStatus
  /// The share consumed, in milliunits (0...100,000). Apple wants 0 when the purchase was not
  /// delivered, more than 0 with `GRANT_PRORATED` for a one-time purchase, and none for an
  /// auto-renewable subscription (it computes that itself).
  public var consumptionPercentage: Int32?
  public var refundPreference: RefundPreference?
  /// Whether a free sample, trial or description of the content was given before purchase.
  public var sampleContentProvided: Bool

  public init(
    customerConsented: Bool, deliveryStatus: DeliveryStatus, consumptionPercentage: Int32?,
    refundPreference: RefundPreference?, sampleContentProvided: Bool
  ) {
    self.customerConsented = customerConsented
    self.deliveryStatus = deliveryStatus
    self.consumptionPercentage = consumptionPercentage
    self.refundPreference = refundPreference
    self.sampleContentProvided = sampleContentProvided
  }

  /// Apple's JSON, optional fields left out when absent.
  public var json: [String: Any] {
    var object: [String: Any] = [
      "customerConsented": customerConsented, "deliveryStatus": deliveryStatus.rawValue,
      "sampleContentProvided": sampleContentProvided,
    ]
    if let consumptionPercentage { object["consumptionPercentage"] = Int(consumptionPercentage) }
    if let refundPreference { object["refundPreference"] = refundPreference.rawValue }
    return object
  }
}
