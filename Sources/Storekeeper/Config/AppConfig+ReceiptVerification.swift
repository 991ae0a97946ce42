import StorekeeperCore

/// `APPLE_RECEIPT_VERIFICATION`, `RECEIPT_APPLE_CALL_LIMIT` and the App Store Server API's sandbox URL, checked at start-up.
extension AppConfig {
  static func readReceiptVerification(_ env: [String: String], into config: inout AppConfig)
    throws
  {
    if let value = env["APPLE_RECEIPT_VERIFICATION"], !value.isEmpty {
      guard let mode = ReceiptVerificationMode(rawValue: value.lowercased()) else {
        throw ConfigError(
          variable: "APPLE_RECEIPT_VERIFICATION",
          problem: "must be one of "
            + ReceiptVerificationMode.allCases.map(\.rawValue).joined(separator: ", "))
      }
      config.receiptVerification = mode
    }
    if config.receiptVerification == .serverAPI, config.apiKeyPath == nil {
      throw ConfigError(
        variable: "APPLE_RECEIPT_VERIFICATION",
        problem:
          "server_api needs the App Store Server API key: set APPLE_API_KEY_FILE, APPLE_API_KEY_ID and APPLE_API_ISSUER_ID"
      )
    }
    config.receiptAppleCallLimit =
      try ConfigReader(env: env).integer("RECEIPT_APPLE_CALL_LIMIT", 2...200)
      ?? config.receiptAppleCallLimit
    if let value = env["APPLE_API_SANDBOX_URL"], !value.isEmpty {
      try checkURL("APPLE_API_SANDBOX_URL", value, allowInsecure: config.allowInsecureURLs)
      config.apiSandboxURL = value
    }
  }

  /// Whether StoreKit 1 receipts are asked of the App Store Server API first.
  var receiptsUseServerAPI: Bool {
    switch receiptVerification {
    case .verifyReceipt: false
    case .serverAPI: true
    case .auto: apiKeyPath != nil
    }
  }
}
