/// One transaction in the iOS 6 receipt format, as verifyReceipt answers a transaction receipt:
/// the whole `receipt` object (and, for subscriptions, the single-object
/// `latest_receipt_info`). The app is `bid`, not `bundle_id`; `expires_date` is milliseconds
/// and its dates are `expires_date_formatted(_pst)`; there is no `app_account_token`.
struct FakeLegacyTransaction: Encodable, Sendable {
  var bid: String
  var bvrs: String
  /// The product's Apple id.
  var itemId: String
  var appItemId: String
  var versionExternalIdentifier: String
  /// The device's identifiers.
  var uniqueIdentifier: String
  var uniqueVendorIdentifier: String
  var quantity: String
  var productId: String
  var transactionId: String
  var originalTransactionId: String
  var purchaseDate: String
  var purchaseDateMs: String
  var purchaseDatePst: String
  var originalPurchaseDate: String
  var originalPurchaseDateMs: String
  var originalPurchaseDatePst: String
  var expiresDate: String?
  var expiresDateFormatted: String?
  var expiresDateFormattedPst: String?
  var webOrderLineItemId: String?
  var isTrialPeriod: String?
  var isInIntroOfferPeriod: String?
  var cancellationDate: String?
  var cancellationDateMs: String?
  var cancellationReason: String?

  init(_ transaction: FakeTransaction, appleAccount: String, appAppleId: Int64) {
    let purchase = FakeAppleDate(milliseconds: transaction.purchaseDate)
    let original = FakeAppleDate(milliseconds: transaction.originalPurchaseDate)
    let expires = transaction.expiresDate.map(FakeAppleDate.init(milliseconds:))
    let cancellation = transaction.revocationDate.map(FakeAppleDate.init(milliseconds:))
    let device = Self.hex(appleAccount, digits: 40)
    bid = transaction.bundleId
    bvrs = "1.0"
    itemId = String(1_000_000_000 + Self.hash(transaction.productId) % 1_000_000_000)
    appItemId = transaction.environment == "Production" ? String(appAppleId) : "0"
    versionExternalIdentifier = "0"
    uniqueIdentifier = device
    let vendor = Array(Self.hex("vendor:" + appleAccount, digits: 32).uppercased())
    uniqueVendorIdentifier = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map {
      String(vendor[$0])
    }.joined(separator: "-")
    quantity = String(transaction.quantity)
    productId = transaction.productId
    transactionId = transaction.transactionId
    originalTransactionId = transaction.originalTransactionId
    purchaseDate = purchase.gmt
    purchaseDateMs = purchase.milliseconds
    purchaseDatePst = purchase.pacific
    originalPurchaseDate = original.gmt
    originalPurchaseDateMs = original.milliseconds
    originalPurchaseDatePst = original.pacific
    expiresDate = expires?.milliseconds
    expiresDateFormatted = expires?.gmt
    expiresDateFormattedPst = expires?.pacific
    webOrderLineItemId = transaction.webOrderLineItemId
    isTrialPeriod = transaction.isAutoRenewable ? "false" : nil
    isInIntroOfferPeriod = transaction.isAutoRenewable ? "false" : nil
    cancellationDate = cancellation?.gmt
    cancellationDateMs = cancellation?.milliseconds
    cancellationReason = transaction.revocationReason.map { String($0) }
  }

  /// FNV-1a: stable made-up identifiers for the same account or product.
  private static func hash(_ text: String) -> UInt64 {
    text.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
  }

  private static func hex(_ text: String, digits: Int) -> String {
    var out = ""
    var round = 0
    while out.count < digits {
      let chunk = String(hash("\(round):\(text)"), radix: 16)
      out += String(repeating: "0", count: 16 - chunk.count) + chunk
      round += 1
    }
    return String(out.prefix(digits))
  }
}
