import AppStore

/// What a new purchase asks for; the store fills in ids and the receipt.
struct FakePurchase: Sendable {
  var appleAccount: String
  var bundleId: String
  var productId: String
  var type: TransactionType
  var quantity: Int
  var appAccountToken: String?
  var environment: String
  var purchaseDate: Int64
  var expiresDate: Int64?
  var price: Int64
  var currency: String
  var subscriptionGroupIdentifier: String?
  var receiptStyle: FakeReceiptStyle = .app
  var ownership: InAppOwnershipType = .purchased
  var storefront = "USA"
}
