/// `APPLE_RECEIPT_VERIFICATION`: how a StoreKit 1 receipt is checked with Apple.
public enum ReceiptVerificationMode: String, Sendable, CaseIterable {
  /// The App Store Server API when a key is configured (`APPLE_API_KEY_*`), else
  /// verifyReceipt; receipts the Server API cannot read (iOS 6-style) go to verifyReceipt.
  case auto
  /// Only the App Store Server API; needs the key. iOS 6-style transaction receipts are
  /// refused (`transaction_receipt_needs_verify_receipt`).
  case serverAPI = "server_api"
  /// Only verifyReceipt, as before Apple deprecated it.
  case verifyReceipt = "verify_receipt"
}
