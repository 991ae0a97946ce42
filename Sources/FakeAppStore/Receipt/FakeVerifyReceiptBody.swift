/// verifyReceipt's answer, in Apple's shape: `status` a number, `is_retryable` a boolean, dates
/// and identifiers strings. Encoded with snake_case keys; absent parts are left out.
struct FakeVerifyReceiptBody: Encodable, Sendable {
  var status: Int
  var environment: String?
  var isRetryable: Bool?
  var receipt: FakeReceiptBody?
  var latestReceiptInfo: [FakeReceiptEntry]?
  var latestReceipt: String?
  var pendingRenewalInfo: [FakePendingRenewal]?

  static func status(_ status: Int, environment: String? = nil, retryable: Bool? = nil) -> Self {
    FakeVerifyReceiptBody(status: status, environment: environment, isRetryable: retryable)
  }
}
