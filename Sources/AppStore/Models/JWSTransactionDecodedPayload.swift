/// A StoreKit 2 signed transaction, decoded.
///
/// Dates are milliseconds since 1970. Apple's enumerations are kept raw (so new values still
/// decode) and read typed through the `…Value` properties. Every field is optional, as in
/// Apple's libraries, and a field of an unexpected type decodes as nil: what a use needs is
/// asked for where it is used (`requireSettleable()` for settling).
public struct JWSTransactionDecodedPayload: Codable, Sendable, Equatable {
  public var transactionId: String?
  public var originalTransactionId: String?
  public var webOrderLineItemId: String?
  public var bundleId: String?
  public var productId: String?
  public var subscriptionGroupIdentifier: String?
  public var purchaseDate: Int64?
  public var originalPurchaseDate: Int64?
  public var expiresDate: Int64?
  public var quantity: Int?
  public var type: String?
  public var appAccountToken: String?
  public var inAppOwnershipType: String?
  public var signedDate: Int64?
  public var revocationReason: Int32?
  public var revocationDate: Int64?
  public var isUpgraded: Bool?
  public var offerType: Int32?
  public var offerIdentifier: String?
  public var environment: String?
  public var storefront: String?
  public var storefrontId: String?
  public var transactionReason: String?
  public var currency: String?
  public var price: Int64?
  public var offerDiscountType: String?
  public var appTransactionId: String?
  public var offerPeriod: String?
  /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`, with a refund or revocation.
  public var revocationType: String?
  /// What Apple refunded or revoked, in milliunits of percent (40000 is 40%).
  public var revocationPercentage: Int32?

  public var typeValue: TransactionType? { type.flatMap(TransactionType.init(rawValue:)) }
  public var inAppOwnershipTypeValue: InAppOwnershipType? {
    inAppOwnershipType.flatMap(InAppOwnershipType.init(rawValue:))
  }
  public var revocationReasonValue: RevocationReason? {
    revocationReason.flatMap(RevocationReason.init(rawValue:))
  }
  public var offerTypeValue: OfferType? { offerType.flatMap(OfferType.init(rawValue:)) }
  public var environmentValue: AppStoreEnvironment? {
    environment.flatMap(AppStoreEnvironment.init(rawValue:))
  }
  public var transactionReasonValue: TransactionReason? {
    transactionReason.flatMap(TransactionReason.init(rawValue:))
  }
  public var offerDiscountTypeValue: OfferDiscountType? {
    offerDiscountType.flatMap(OfferDiscountType.init(rawValue:))
  }

  public init(
    transactionId: String? = nil,
    originalTransactionId: String? = nil,
    webOrderLineItemId: String? = nil,
    bundleId: String? = nil,
    productId: String? = nil,
    subscriptionGroupIdentifier: String? = nil,
    purchaseDate: Int64? = nil,
    originalPurchaseDate: Int64? = nil,
    expiresDate: Int64? = nil,
    quantity: Int? = nil,
    type: String? = nil,
    appAccountToken: String? = nil,
    inAppOwnershipType: String? = nil,
    signedDate: Int64? = nil,
    revocationReason: Int32? = nil,
    revocationDate: Int64? = nil,
    isUpgraded: Bool? = nil,
    offerType: Int32? = nil,
    offerIdentifier: String? = nil,
    environment: String? = nil,
    storefront: String? = nil,
    storefrontId: String? = nil,
    transactionReason: String? = nil,
    currency: String? = nil,
    price: Int64? = nil,
    offerDiscountType: String? = nil,
    appTransactionId: String? = nil,
    offerPeriod: String? = nil,
    revocationType: String? = nil,
    revocationPercentage: Int32? = nil
  ) {
    self.transactionId = transactionId
    self.originalTransactionId = originalTransactionId
    self.webOrderLineItemId = webOrderLineItemId
    self.bundleId = bundleId
    self.productId = productId
    self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
    self.purchaseDate = purchaseDate
    self.originalPurchaseDate = originalPurchaseDate
    self.expiresDate = expiresDate
    self.quantity = quantity
    self.type = type
    self.appAccountToken = appAccountToken
    self.inAppOwnershipType = inAppOwnershipType
    self.signedDate = signedDate
    self.revocationReason = revocationReason
    self.revocationDate = revocationDate
    self.isUpgraded = isUpgraded
    self.offerType = offerType
    self.offerIdentifier = offerIdentifier
    self.environment = environment
    self.storefront = storefront
    self.storefrontId = storefrontId
    self.transactionReason = transactionReason
    self.currency = currency
    self.price = price
    self.offerDiscountType = offerDiscountType
    self.appTransactionId = appTransactionId
    self.offerPeriod = offerPeriod
    self.revocationType = revocationType
    self.revocationPercentage = revocationPercentage
  }

  private enum CodingKeys: String, CodingKey {
    case transactionId, originalTransactionId, webOrderLineItemId, bundleId, productId,
      subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity, type,
      appAccountToken, inAppOwnershipType, signedDate, revocationReason, revocationDate, isUpgraded,
      offerType, offerIdentifier, environment, storefront, storefrontId, transactionReason,
      currency, price, offerDiscountType, appTransactionId, offerPeriod, revocationType,
      revocationPercentage
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    transactionId = container.lenient(.transactionId)
    originalTransactionId = container.lenient(.originalTransactionId)
    webOrderLineItemId = container.lenient(.webOrderLineItemId)
    bundleId = container.lenient(.bundleId)
    productId = container.lenient(.productId)
    subscriptionGroupIdentifier = container.lenient(.subscriptionGroupIdentifier)
    purchaseDate = container.lenient(.purchaseDate)
    originalPurchaseDate = container.lenient(.originalPurchaseDate)
    expiresDate = container.lenient(.expiresDate)
    quantity = container.lenient(.quantity)
    type = container.lenient(.type)
    appAccountToken = container.lenient(.appAccountToken)
    inAppOwnershipType = container.lenient(.inAppOwnershipType)
    signedDate = container.lenient(.signedDate)
    revocationReason = container.lenient(.revocationReason)
    revocationDate = container.lenient(.revocationDate)
    isUpgraded = container.lenient(.isUpgraded)
    offerType = container.lenient(.offerType)
    offerIdentifier = container.lenient(.offerIdentifier)
    environment = container.lenient(.environment)
    storefront = container.lenient(.storefront)
    storefrontId = container.lenient(.storefrontId)
    transactionReason = container.lenient(.transactionReason)
    currency = container.lenient(.currency)
    price = container.lenient(.price)
    offerDiscountType = container.lenient(.offerDiscountType)
    appTransactionId = container.lenient(.appTransactionId)
    offerPeriod = container.lenient(.offerPeriod)
    revocationType = container.lenient(.revocationType)
    revocationPercentage = container.lenient(.revocationPercentage)
  }
}

extension JWSTransactionDecodedPayload: SignedPayload {}
