/// One element of verifyReceipt's `pending_renewal_info` (app receipts with auto-renewable
/// subscriptions): what happens at the subscription's next renewal.
public struct PendingRenewal: Decodable, Sendable, Equatable {
  public var originalTransactionId: String
  public var productId: String?
  /// The product the subscription renews to.
  public var autoRenewProductId: String?
  /// False once the customer turned renewal off.
  public var autoRenews: Bool?
  /// Apple's `expiration_intent` (1 cancelled, 2 billing error, …).
  public var expirationIntent: Int?
  public var isInBillingRetryPeriod: Bool?
  /// Milliseconds since 1970.
  public var gracePeriodExpiresDate: Int64?

  private enum CodingKeys: String, CodingKey {
    case originalTransactionId = "original_transaction_id"
    case productId = "product_id"
    case autoRenewProductId = "auto_renew_product_id"
    case autoRenewStatus = "auto_renew_status"
    case expirationIntent = "expiration_intent"
    case isInBillingRetryPeriod = "is_in_billing_retry_period"
    case gracePeriodExpiresDateMs = "grace_period_expires_date_ms"
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    func text(_ key: CodingKeys) -> String? {
      container.lenient(key, as: FlexibleString.self)?.value.nonEmpty
    }
    guard let original = text(.originalTransactionId) else {
      throw DecodingError.keyNotFound(
        CodingKeys.originalTransactionId,
        .init(codingPath: decoder.codingPath, debugDescription: "no original_transaction_id"))
    }
    originalTransactionId = original
    productId = text(.productId)
    autoRenewProductId = text(.autoRenewProductId)
    autoRenews = container.lenient(.autoRenewStatus, as: FlexibleString.self)?.bool
    expirationIntent = text(.expirationIntent).flatMap { Int($0) }
    isInBillingRetryPeriod =
      container.lenient(.isInBillingRetryPeriod, as: FlexibleString.self)?
      .bool
    gracePeriodExpiresDate = text(.gracePeriodExpiresDateMs).flatMap { Int64($0) }
  }

}
