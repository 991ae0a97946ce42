/// A verifyReceipt answer that blames this server's configuration, not the proof: Apple (or
/// whatever answers at the configured URL) could not judge the receipt because of how
/// Storekeeper asked. The proof is neither valid nor invalid; it waits until the setting is
/// fixed, and the operator — not the customer — is told.
public struct Misconfiguration: Sendable, Hashable {
  /// The setting of `AppStoreConfiguration` that is wrong.
  public enum Setting: String, Sendable, Hashable, CaseIterable {
    /// 21004: the `password` sent does not match the app's shared secret.
    case sharedSecret = "shared_secret"
    /// 21008 from the production URL, 21000: that URL is not production's verifyReceipt.
    case verifyReceiptURL = "verify_receipt_url"
    /// 21007 from the sandbox URL, 21000: that URL is not the sandbox's verifyReceipt.
    case verifyReceiptSandboxURL = "verify_receipt_sandbox_url"
    /// 401 from the App Store Server API: the in-app purchase key, its id or the issuer id.
    case apiKey = "api_key"
  }

  public var setting: Setting
  /// Apple's `status`.
  public var status: Int
  /// The endpoint that answered: "Production" or "Sandbox".
  public var environment: String

  public init(setting: Setting, status: Int, environment: String) {
    self.setting = setting
    self.status = status
    self.environment = environment
  }

  /// The reason a report keeps while it waits, spelled like every verifyReceipt reason.
  public var reason: String { "verify_receipt_\(status)" }
}
