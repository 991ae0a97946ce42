/// `POST /fake/v1/purchases`.
struct FakePurchaseRequest: Decodable, Sendable {
  var bundleId: String
  var productId: String
  /// Apple's spelling: "Consumable", "Non-Consumable", "Auto-Renewable Subscription",
  /// "Non-Renewing Subscription".
  var type: String
  var quantity: Int?
  var appAccountToken: String?
  /// "Production", "Sandbox" or "Xcode".
  var environment: String
  /// Purchases with the same account share one app receipt; absent: a fresh account.
  var appleAccount: String?
  /// Auto-renewable only: expiry relative to now (may be negative); default purchase + 30 days.
  var expiresInSeconds: Int64?
  var purchaseDateMs: Int64?
  /// Milliunits (6000 is 6.00); default 6000.
  var price: Int64?
  /// ISO 4217; default "USD".
  var currency: String?
  /// The App Store country (ISO 3166-1 alpha-3) the transaction is signed for; default "USA".
  var storefront: String?
  /// Auto-renewable only; default "21000001".
  var subscriptionGroupIdentifier: String?
  /// "app" (default): `receipt` in the answer is the account's app receipt; "transaction": the
  /// iOS 6-style receipt of this one transaction.
  var receiptStyle: String?
  /// "PURCHASED" (default) or "FAMILY_SHARED": a family member's copy of a purchase.
  var inAppOwnershipType: String?
}
