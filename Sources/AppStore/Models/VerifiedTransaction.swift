/// One Apple transaction as the domain sees it, whichever proof it came from.
public struct VerifiedTransaction: Sendable, Codable, Equatable {
  public var transactionId: String
  public var originalTransactionId: String
  public var bundleId: String
  public var productId: String
  public var quantity: Int
  /// Milliseconds since 1970.
  public var purchaseDate: Int64
  public var expiresDate: Int64?
  public var revocationDate: Int64?
  public var revocationReason: Int?
  /// Apple's `revocationType` (`REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`) and
  /// `revocationPercentage` (milliunits: 40000 is 40% refunded), with a refund.
  public var revocationType: String?
  public var revocationPercentage: Int?
  /// Lowercased UUID string.
  public var appAccountToken: String?
  /// "Production" or "Sandbox".
  public var environment: String
  /// Apple's spelling ("Consumable", "Non-Consumable", "Auto-Renewable Subscription",
  /// "Non-Renewing Subscription"); nil for receipts, which do not say.
  public var type: String?
  public var webOrderLineItemId: String?
  /// The customer's download of the app (`appTransactionId`), when Apple says: the same for
  /// every purchase of one Apple Account in this app, across re-installs and devices.
  public var appTransactionId: String?
  /// What the user paid as Apple reported it: milliunits of `currency` (990 is 0.99), the
  /// storefront's ISO 3166-1 alpha-3 country, the offer's type (1 introductory, 2 promotional,
  /// 3 offer code, 4 win-back) and discount (`FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`),
  /// and whether the customer upgraded from this transaction. Receipts say none of it (nil).
  /// Charts count money from these, never from the catalog.
  public var price: Int64?
  public var currency: String?
  public var storefront: String?
  public var offerType: Int?
  public var offerDiscountType: String?
  public var isUpgraded: Bool?
  /// The customer has this through Family Sharing (`FAMILY_SHARED`): a family member's copy of a
  /// purchase someone else paid for. It grants access as the purchase does and is no money.
  /// False when Apple says `PURCHASED` or nothing (an app receipt read locally does not say).
  public var isFamilyShared: Bool

  public init(
    transactionId: String, originalTransactionId: String, bundleId: String, productId: String,
    quantity: Int, purchaseDate: Int64, expiresDate: Int64? = nil, revocationDate: Int64? = nil,
    revocationReason: Int? = nil, appAccountToken: String? = nil, environment: String,
    type: String? = nil, webOrderLineItemId: String? = nil, appTransactionId: String? = nil,
    price: Int64? = nil, currency: String? = nil, storefront: String? = nil, offerType: Int? = nil,
    offerDiscountType: String? = nil, isUpgraded: Bool? = nil, isFamilyShared: Bool = false,
    revocationType: String? = nil, revocationPercentage: Int? = nil
  ) {
    self.transactionId = transactionId
    self.originalTransactionId = originalTransactionId
    self.bundleId = bundleId
    self.productId = productId
    self.quantity = quantity
    self.purchaseDate = purchaseDate
    self.expiresDate = expiresDate
    self.revocationDate = revocationDate
    self.revocationReason = revocationReason
    self.appAccountToken = appAccountToken
    self.environment = environment
    self.type = type
    self.webOrderLineItemId = webOrderLineItemId
    self.appTransactionId = appTransactionId
    self.price = price
    self.currency = currency
    self.storefront = storefront
    self.offerType = offerType
    self.offerDiscountType = offerDiscountType
    self.isUpgraded = isUpgraded
    self.isFamilyShared = isFamilyShared
    self.revocationType = revocationType
    self.revocationPercentage = revocationPercentage
  }
}
