/// `VoidedPurchase`: a purchase canceled, refunded or charged back.
public struct VoidedPurchase: Sendable, Decodable, Equatable {
  public var kind: String?
  public var purchaseToken: String?
  public var orderId: String?
  /// Milliseconds since 1970 (int64 strings on the wire).
  public var purchaseTimeMillis: Int64?
  public var voidedTimeMillis: Int64?
  /// 0 user, 1 developer, 2 Google.
  public var voidedSource: Int32?
  /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud,
  /// 6 friendly fraud, 7 chargeback, 8 unacknowledged purchase (the three-day rule).
  public var voidedReason: Int32?
  /// Set for a quantity-based partial refund.
  public var voidedQuantity: Int32?

  enum CodingKeys: String, CodingKey {
    case kind, purchaseToken, orderId, purchaseTimeMillis, voidedTimeMillis, voidedSource
    case voidedReason, voidedQuantity
  }

  /// An entry as Storekeeper kept it, to apply later what Google listed before.
  public init(
    purchaseToken: String, orderId: String, voidedTimeMillis: Int64, voidedReason: Int32?,
    voidedQuantity: Int32?
  ) {
    kind = "androidpublisher#voidedPurchase"
    self.purchaseToken = purchaseToken
    self.orderId = orderId
    self.voidedTimeMillis = voidedTimeMillis
    self.voidedReason = voidedReason
    self.voidedQuantity = voidedQuantity
  }

  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    kind = try c.decodeIfPresent(String.self, forKey: .kind)
    purchaseToken = try c.decodeIfPresent(String.self, forKey: .purchaseToken)
    orderId = try c.decodeIfPresent(String.self, forKey: .orderId)
    purchaseTimeMillis = try c.decodeInt64StringIfPresent(forKey: .purchaseTimeMillis)
    voidedTimeMillis = try c.decodeInt64StringIfPresent(forKey: .voidedTimeMillis)
    voidedSource = try c.decodeIfPresent(Int32.self, forKey: .voidedSource)
    voidedReason = try c.decodeIfPresent(Int32.self, forKey: .voidedReason)
    voidedQuantity = try c.decodeIfPresent(Int32.self, forKey: .voidedQuantity)
  }

  public enum Reason: Int32, Sendable {
    case other = 0
    case remorse = 1
    case notReceived = 2
    case defective = 3
    case accidentalPurchase = 4
    case fraud = 5
    case friendlyFraud = 6
    case chargeback = 7
    case unacknowledgedPurchase = 8
  }

  public enum Source: Int32, Sendable {
    case user = 0
    case developer = 1
    case google = 2
  }

  public var reasonValue: Reason? { voidedReason.flatMap(Reason.init) }
  public var sourceValue: Source? { voidedSource.flatMap(Source.init) }
}
