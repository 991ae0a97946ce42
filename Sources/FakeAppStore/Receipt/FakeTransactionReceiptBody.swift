/// verifyReceipt's answer to an iOS 6-style transaction receipt: `receipt` is the transaction
/// itself; for a subscription `latest_receipt_info` is a single object (its latest period) —
/// or, once that has expired (status 21006), `latest_expired_receipt_info`. Production answers
/// carry no `environment`, as Apple's did not.
struct FakeTransactionReceiptBody: Encodable, Sendable {
  var status: Int
  var environment: String?
  var receipt: FakeLegacyTransaction
  var latestReceiptInfo: FakeLegacyTransaction?
  var latestExpiredReceiptInfo: FakeLegacyTransaction?
  var latestReceipt: String?
  var autoRenewStatus: Int32?
  var autoRenewProductId: String?
}
