import AppStore

extension Misconfiguration.Setting {
  /// The environment variable an operator changes to fix it (see AppConfig).
  var variable: String {
    switch self {
    case .sharedSecret: "APPLE_SHARED_SECRET"
    case .verifyReceiptURL: "APPLE_VERIFY_RECEIPT_URL"
    case .verifyReceiptSandboxURL: "APPLE_VERIFY_RECEIPT_SANDBOX_URL"
    case .apiKey: "APPLE_API_KEY_ID"
    }
  }
}
