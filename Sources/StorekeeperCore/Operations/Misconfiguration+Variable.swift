import AppStore

extension Misconfiguration.Setting {
  /// The environment variable an operator changes to fix it (see AppConfig).
  package var variable: String {
    switch self {
    case .sharedSecret: "APPLE_SHARED_SECRET"
    case .verifyReceiptURL: "APPLE_VERIFY_RECEIPT_URL"
    case .verifyReceiptSandboxURL: "APPLE_VERIFY_RECEIPT_SANDBOX_URL"
    case .apiKey: "APPLE_API_KEY_ID"
    }
  }

  /// Which of Apple's services blamed the setting, for the log and `/readyz`.
  package var service: String {
    switch self {
    case .sharedSecret, .verifyReceiptURL, .verifyReceiptSandboxURL: "verifyReceipt"
    case .apiKey: "the App Store Server API"
    }
  }
}
