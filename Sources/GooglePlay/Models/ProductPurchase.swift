/// `ProductPurchase` of androidpublisher v3 (`purchases.products.get`): the state of a one-time
/// product purchase. Google's integer codes are kept raw and read through typed properties, so
/// a code added later still decodes.
public struct ProductPurchase: Sendable, Decodable, Equatable {
  public var kind: String?
  /// 0 purchased, 1 canceled, 2 pending.
  public var purchaseState: Int32?
  /// 0 yet to be consumed, 1 consumed.
  public var consumptionState: Int32?
  /// 0 yet to be acknowledged, 1 acknowledged.
  public var acknowledgementState: Int32?
  public var orderId: String?
  public var productId: String?
  public var purchaseToken: String?
  /// Milliseconds since 1970 (an int64 string on the wire).
  public var purchaseTimeMillis: Int64?
  /// Set only outside the standard billing flow: 0 test, 1 promo, 2 rewarded.
  public var purchaseType: Int32?
  /// Absent means 1.
  public var quantity: Int32?
  public var refundableQuantity: Int32?
  public var obfuscatedExternalAccountId: String?
  public var obfuscatedExternalProfileId: String?
  public var developerPayload: String?
  public var regionCode: String?

  enum CodingKeys: String, CodingKey {
    case kind, purchaseState, consumptionState, acknowledgementState, orderId, productId
    case purchaseToken, purchaseTimeMillis, purchaseType, quantity, refundableQuantity
    case obfuscatedExternalAccountId, obfuscatedExternalProfileId, developerPayload, regionCode
  }

  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    kind = try c.decodeIfPresent(String.self, forKey: .kind)
    purchaseState = try c.decodeIfPresent(Int32.self, forKey: .purchaseState)
    consumptionState = try c.decodeIfPresent(Int32.self, forKey: .consumptionState)
    acknowledgementState = try c.decodeIfPresent(Int32.self, forKey: .acknowledgementState)
    orderId = try c.decodeIfPresent(String.self, forKey: .orderId)
    productId = try c.decodeIfPresent(String.self, forKey: .productId)
    purchaseToken = try c.decodeIfPresent(String.self, forKey: .purchaseToken)
    purchaseTimeMillis = try c.decodeInt64StringIfPresent(forKey: .purchaseTimeMillis)
    purchaseType = try c.decodeIfPresent(Int32.self, forKey: .purchaseType)
    quantity = try c.decodeIfPresent(Int32.self, forKey: .quantity)
    refundableQuantity = try c.decodeIfPresent(Int32.self, forKey: .refundableQuantity)
    obfuscatedExternalAccountId = try c.decodeIfPresent(
      String.self, forKey: .obfuscatedExternalAccountId)
    obfuscatedExternalProfileId = try c.decodeIfPresent(
      String.self, forKey: .obfuscatedExternalProfileId)
    developerPayload = try c.decodeIfPresent(String.self, forKey: .developerPayload)
    regionCode = try c.decodeIfPresent(String.self, forKey: .regionCode)
  }

  public enum PurchaseState: Int32, Sendable {
    case purchased = 0
    case canceled = 1
    case pending = 2
  }

  public enum PurchaseType: Int32, Sendable {
    case test = 0
    case promo = 1
    case rewarded = 2
  }

  public var purchaseStateValue: PurchaseState? { purchaseState.flatMap(PurchaseState.init) }
  public var purchaseTypeValue: PurchaseType? { purchaseType.flatMap(PurchaseType.init) }
  public var isAcknowledged: Bool { acknowledgementState == 1 }
  public var isConsumed: Bool { consumptionState == 1 }
  /// A purchase from a license testing account (sandbox money).
  public var isTestPurchase: Bool { purchaseType == PurchaseType.test.rawValue }
  /// What was bought: Google omits the field for a single item.
  public var effectiveQuantity: Int32 { quantity ?? 1 }
}
