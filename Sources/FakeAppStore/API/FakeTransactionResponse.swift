/// A transaction as the fake's own endpoints show it: `POST /fake/v1/purchases` (201) and
/// `GET /fake/v1/transactions/{transaction_id}`.
struct FakeTransactionResponse: Encodable, Sendable {
  var transactionId: String
  var originalTransactionId: String
  var webOrderLineItemId: String?
  var bundleId: String
  var productId: String
  var type: String
  var quantity: Int
  var environment: String
  var appleAccount: String
  var appAccountToken: String?
  var appTransactionId: String
  /// JWS (ES256, x5c leaf/intermediate/root) of the transaction as it stands now.
  var signedTransaction: String
  /// What the app posts, by `receipt_style`: `app_receipt` or `transaction_receipt`.
  var receipt: String
  var receiptStyle: String
  /// Base64 app receipt of the account (PKCS#7, as Apple's), with all its transactions so far.
  var appReceipt: String
  /// Base64 iOS 6-style receipt of this transaction alone.
  var transactionReceipt: String
  var purchaseDateMs: Int64
  var expiresDateMs: Int64?
  var revocationDateMs: Int64?
  var revocationReason: Int32?

  init(
    _ transaction: FakeTransaction, receipt: FakeReceipt, appReceipt: String,
    signedTransaction: String
  ) {
    transactionId = transaction.transactionId
    originalTransactionId = transaction.originalTransactionId
    webOrderLineItemId = transaction.webOrderLineItemId
    bundleId = transaction.bundleId
    productId = transaction.productId
    type = transaction.type.rawValue
    quantity = transaction.quantity
    environment = transaction.environment
    appleAccount = receipt.appleAccount
    appAccountToken = transaction.appAccountToken
    appTransactionId = transaction.appTransactionId
    self.signedTransaction = signedTransaction
    self.appReceipt = appReceipt
    transactionReceipt = FakeTransactionReceipt.base64(transactionId: transaction.transactionId)
    receiptStyle = transaction.receiptStyle.rawValue
    self.receipt = transaction.receiptStyle == .app ? appReceipt : transactionReceipt
    purchaseDateMs = transaction.purchaseDate
    expiresDateMs = transaction.expiresDate
    revocationDateMs = transaction.revocationDate
    revocationReason = transaction.revocationReason
  }
}
