import AppStore

/// One purchase or renewal the fake App Store recorded, with every fact Apple signs about it.
struct FakeTransaction: Sendable {
  var transactionId: String
  var originalTransactionId: String
  var webOrderLineItemId: String?
  var bundleId: String
  var productId: String
  var subscriptionGroupIdentifier: String?
  var type: TransactionType
  var quantity: Int
  /// Lowercase UUID, as StoreKit reports it.
  var appAccountToken: String?
  /// Apple's spelling: "Production", "Sandbox" or "Xcode".
  var environment: String
  /// Milliseconds since 1970, like every date Apple sends.
  var purchaseDate: Int64
  var originalPurchaseDate: Int64
  var expiresDate: Int64?
  /// Milliunits of `currency` (6000 is 6.00).
  var price: Int64
  var currency: String
  /// "PURCHASE" or "RENEWAL".
  var transactionReason: String
  var revocationDate: Int64?
  var revocationReason: Int32?
  var revocationType: String?
  var revocationPercentage: Int32?
  /// The app receipt (of one Apple account on one device) this transaction shows up in.
  var receiptId: String
  /// The receipt's account's download of the app, which Apple puts in every transaction.
  var appTransactionId: String
  /// Which receipt the app posts for it; renewals keep the original's.
  var receiptStyle: FakeReceiptStyle = .app
  /// A family member's copy (`FAMILY_SHARED`) or the buyer's own; renewals keep the original's.
  var ownership: InAppOwnershipType = .purchased
  /// Apple's `isUpgraded`: the customer upgraded from this period to another product.
  var isUpgraded = false
  /// The App Store country it was bought in (ISO 3166-1 alpha-3); its renewals keep it.
  var storefront = "USA"
  /// A StoreKit 1 restore of the purchase `originalTransactionId`: a transaction id of its own
  /// that only receipts show. StoreKit 2 and the Server API know the purchase by its original
  /// transaction alone, so their answers never name it.
  var isRestore = false

  var isAutoRenewable: Bool { type == .autoRenewableSubscription }
}
