/// verifyReceipt's `receipt` object: the decoded app receipt.
struct FakeReceiptBody: Encodable, Sendable {
  /// "Production" or "ProductionSandbox".
  var receiptType: String
  /// The app's Apple id; 0 in the sandbox. Numbers, as Apple sends them.
  var adamId: Int64
  var appItemId: Int64
  var bundleId: String
  var applicationVersion: String
  var downloadId: Int64
  var versionExternalIdentifier: Int64
  var receiptCreationDate: String
  var receiptCreationDateMs: String
  var receiptCreationDatePst: String
  var requestDate: String
  var requestDateMs: String
  var requestDatePst: String
  var originalPurchaseDate: String
  var originalPurchaseDateMs: String
  var originalPurchaseDatePst: String
  var originalApplicationVersion: String
  var inApp: [FakeReceiptEntry]

  init(_ receipt: FakeReceipt, appAppleId: Int64, entries: [FakeReceiptEntry], now: Int64) {
    let sandbox = receipt.environment != "Production"
    let created = FakeAppleDate(milliseconds: receipt.createdAt)
    let request = FakeAppleDate(milliseconds: now)
    receiptType = sandbox ? "ProductionSandbox" : "Production"
    adamId = sandbox ? 0 : appAppleId
    appItemId = sandbox ? 0 : appAppleId
    bundleId = receipt.bundleId
    applicationVersion = "1"
    downloadId = 0
    versionExternalIdentifier = 0
    receiptCreationDate = created.gmt
    receiptCreationDateMs = created.milliseconds
    receiptCreationDatePst = created.pacific
    requestDate = request.gmt
    requestDateMs = request.milliseconds
    requestDatePst = request.pacific
    originalPurchaseDate = created.gmt
    originalPurchaseDateMs = created.milliseconds
    originalPurchaseDatePst = created.pacific
    originalApplicationVersion = "1.0"
    inApp = entries
  }
}
