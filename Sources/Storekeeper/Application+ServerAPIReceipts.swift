import AppStore
import Foundation
import StorekeeperCore
import StorekeeperLogging

extension Application {
  /// The App Store Server API receipt path when `APPLE_RECEIPT_VERIFICATION` chooses it (and a
  /// key is configured); nil leaves receipts to verifyReceipt.
  static func serverAPIReceiptVerifier(
    _ config: AppConfig, signed: SignedDataVerifier, logger: Logger
  ) throws -> ServerAPIReceiptVerifier? {
    guard config.receiptsUseServerAPI,
      let key = try serverAPIKey(config),
      let production = URL(string: config.apiURL)
    else {
      logger.notice(
        "receipts are verified with verifyReceipt",
        ["apple_receipt_verification": .string(config.receiptVerification.rawValue)])
      return nil
    }
    guard let sandbox = URL(string: config.apiSandboxURL) else {
      throw ConfigError(variable: "APPLE_API_SANDBOX_URL", problem: "must be an http(s) URL")
    }
    logger.notice(
      "receipts are verified with the App Store Server API",
      [
        "apple_receipt_verification": .string(config.receiptVerification.rawValue),
        "ios6_receipts": .string(
          config.receiptVerification == .serverAPI ? "refused" : "verify_receipt"),
        "apple_calls_per_receipt": .int(config.receiptAppleCallLimit),
      ])
    return ServerAPIReceiptVerifier(
      client: TransactionLookupClient(
        key: key, bundleId: config.bundleId,
        timeout: .milliseconds(config.appleTimeoutMs)),
      signed: signed, productionURL: production, sandboxURL: sandbox,
      callLimit: config.receiptAppleCallLimit,
      logger: logger.with("component", "server-api-receipts"))
  }
}
