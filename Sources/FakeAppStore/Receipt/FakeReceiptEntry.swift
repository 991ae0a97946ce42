/// One element of verifyReceipt's `in_app` / `latest_receipt_info`, every value a string as
/// Apple sends it. Encoded with snake_case keys.
struct FakeReceiptEntry: Encodable, Sendable {
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
  var expiresDateMs: String?
  var expiresDatePst: String?
  var webOrderLineItemId: String?
  var isTrialPeriod: String
  var isInIntroOfferPeriod: String?
  var inAppOwnershipType: String
  var subscriptionGroupIdentifier: String?
  var cancellationDate: String?
  var cancellationDateMs: String?
  var cancellationDatePst: String?
  var cancellationReason: String?
  var appAccountToken: String?

  init(_ transaction: FakeTransaction) {
    let purchase = FakeAppleDate(milliseconds: transaction.purchaseDate)
    let original = FakeAppleDate(milliseconds: transaction.originalPurchaseDate)
    let expires = transaction.expiresDate.map(FakeAppleDate.init(milliseconds:))
    let cancellation = transaction.revocationDate.map(FakeAppleDate.init(milliseconds:))
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
    expiresDate = expires?.gmt
    expiresDateMs = expires?.milliseconds
    expiresDatePst = expires?.pacific
    webOrderLineItemId = transaction.webOrderLineItemId
    isTrialPeriod = "false"
    // Apple sends the intro-offer flag for auto-renewable subscriptions only.
    isInIntroOfferPeriod = transaction.isAutoRenewable ? "false" : nil
    inAppOwnershipType = transaction.ownership.rawValue
    subscriptionGroupIdentifier = transaction.subscriptionGroupIdentifier
    cancellationDate = cancellation?.gmt
    cancellationDateMs = cancellation?.milliseconds
    cancellationDatePst = cancellation?.pacific
    cancellationReason = transaction.revocationReason.map { String($0) }
    appAccountToken = transaction.appAccountToken
  }
}
