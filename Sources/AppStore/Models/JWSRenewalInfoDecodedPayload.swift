/// A StoreKit 2 signed subscription renewal info, decoded.
///
/// Dates are milliseconds since 1970; Apple's enumerations are kept raw and read typed through
/// the `…Value` properties. Every field is optional, as in Apple's libraries.
public struct JWSRenewalInfoDecodedPayload: Codable, Sendable, Equatable {
  public var originalTransactionId: String?
  public var autoRenewProductId: String?
  public var productId: String?
  public var autoRenewStatus: Int32?
  public var renewalPrice: Int64?
  public var currency: String?
  public var signedDate: Int64?
  public var environment: String?
  public var recentSubscriptionStartDate: Int64?
  public var renewalDate: Int64?
  public var expirationIntent: Int32?
  public var gracePeriodExpiresDate: Int64?
  public var isInBillingRetryPeriod: Bool?
  public var offerType: Int32?
  public var offerIdentifier: String?
  public var priceIncreaseStatus: Int32?
  public var eligibleWinBackOfferIds: [String]?
  public var appTransactionId: String?
  public var offerPeriod: String?
  public var offerDiscountType: String?
  /// The subscription's app account token (Apple added it to renewal info in 2025).
  public var appAccountToken: String?

  public var autoRenewStatusValue: AutoRenewStatus? {
    autoRenewStatus.flatMap(AutoRenewStatus.init(rawValue:))
  }
  public var environmentValue: AppStoreEnvironment? {
    environment.flatMap(AppStoreEnvironment.init(rawValue:))
  }
  public var expirationIntentValue: ExpirationIntent? {
    expirationIntent.flatMap(ExpirationIntent.init(rawValue:))
  }
  public var offerTypeValue: OfferType? { offerType.flatMap(OfferType.init(rawValue:)) }
  public var priceIncreaseStatusValue: PriceIncreaseStatus? {
    priceIncreaseStatus.flatMap(PriceIncreaseStatus.init(rawValue:))
  }
  public var offerDiscountTypeValue: OfferDiscountType? {
    offerDiscountType.flatMap(OfferDiscountType.init(rawValue:))
  }

  public init(
    originalTransactionId: String? = nil,
    autoRenewProductId: String? = nil,
    productId: String? = nil,
    autoRenewStatus: Int32? = nil,
    renewalPrice: Int64? = nil,
    currency: String? = nil,
    signedDate: Int64? = nil,
    environment: String? = nil,
    recentSubscriptionStartDate: Int64? = nil,
    renewalDate: Int64? = nil,
    expirationIntent: Int32? = nil,
    gracePeriodExpiresDate: Int64? = nil,
    isInBillingRetryPeriod: Bool? = nil,
    offerType: Int32? = nil,
    offerIdentifier: String? = nil,
    priceIncreaseStatus: Int32? = nil,
    eligibleWinBackOfferIds: [String]? = nil,
    appTransactionId: String? = nil,
    offerPeriod: String? = nil,
    offerDiscountType: String? = nil,
    appAccountToken: String? = nil
  ) {
    self.originalTransactionId = originalTransactionId
    self.autoRenewProductId = autoRenewProductId
    self.productId = productId
    self.autoRenewStatus = autoRenewStatus
    self.renewalPrice = renewalPrice
    self.currency = currency
    self.signedDate = signedDate
    self.environment = environment
    self.recentSubscriptionStartDate = recentSubscriptionStartDate
    self.renewalDate = renewalDate
    self.expirationIntent = expirationIntent
    self.gracePeriodExpiresDate = gracePeriodExpiresDate
    self.isInBillingRetryPeriod = isInBillingRetryPeriod
    self.offerType = offerType
    self.offerIdentifier = offerIdentifier
    self.priceIncreaseStatus = priceIncreaseStatus
    self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
    self.appTransactionId = appTransactionId
    self.offerPeriod = offerPeriod
    self.offerDiscountType = offerDiscountType
    self.appAccountToken = appAccountToken
  }

  private enum CodingKeys: String, CodingKey {
    case originalTransactionId, autoRenewProductId, productId, autoRenewStatus, renewalPrice,
      currency, signedDate, environment, recentSubscriptionStartDate, renewalDate, expirationIntent,
      gracePeriodExpiresDate, isInBillingRetryPeriod, offerType, offerIdentifier,
      priceIncreaseStatus, eligibleWinBackOfferIds, appTransactionId, offerPeriod,
      offerDiscountType,
      appAccountToken
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    originalTransactionId = container.lenient(.originalTransactionId)
    autoRenewProductId = container.lenient(.autoRenewProductId)
    productId = container.lenient(.productId)
    autoRenewStatus = container.lenient(.autoRenewStatus)
    renewalPrice = container.lenient(.renewalPrice)
    currency = container.lenient(.currency)
    signedDate = container.lenient(.signedDate)
    environment = container.lenient(.environment)
    recentSubscriptionStartDate = container.lenient(.recentSubscriptionStartDate)
    renewalDate = container.lenient(.renewalDate)
    expirationIntent = container.lenient(.expirationIntent)
    gracePeriodExpiresDate = container.lenient(.gracePeriodExpiresDate)
    isInBillingRetryPeriod = container.lenient(.isInBillingRetryPeriod)
    offerType = container.lenient(.offerType)
    offerIdentifier = container.lenient(.offerIdentifier)
    priceIncreaseStatus = container.lenient(.priceIncreaseStatus)
    eligibleWinBackOfferIds = container.lenient(.eligibleWinBackOfferIds)
    appTransactionId = container.lenient(.appTransactionId)
    offerPeriod = container.lenient(.offerPeriod)
    offerDiscountType = container.lenient(.offerDiscountType)
    appAccountToken = container.lenient(.appAccountToken)
  }
}

extension JWSRenewalInfoDecodedPayload: SignedPayload {}
