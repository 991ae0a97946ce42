import Foundation

/// What the server trusts and expects from Apple. Built once at start-up.
public struct AppStoreConfiguration: Sendable {
  public var bundleId: String
  /// Apple's numeric id of the app; checked on Production notifications when set.
  public var appAppleId: Int64?
  /// Raw environment names ("Production", "Sandbox") whose purchases are accepted.
  /// "Xcode" and "LocalTesting" are refused whatever this holds.
  public var allowedEnvironments: Set<String>
  /// Extra trusted roots (PEM texts) besides Apple Root CA - G3, e.g. the fake App Store's.
  public var extraRootCertificatesPEM: [String]
  public var verifyReceiptURL: URL
  public var verifyReceiptSandboxURL: URL
  public var sharedSecret: String?
  public var receiptTimeout: Duration = .seconds(10)
  /// Distinct chains remembered after a successful verification.
  public var chainCacheCapacity: Int = 64

  public init(bundleId: String) {
    self.bundleId = bundleId
    self.appAppleId = nil
    self.allowedEnvironments = [AppStoreEnvironment.production.rawValue]
    self.extraRootCertificatesPEM = []
    self.verifyReceiptURL = Self.productionVerifyReceiptURL
    self.verifyReceiptSandboxURL = Self.sandboxVerifyReceiptURL
    self.sharedSecret = nil
  }

  static let productionVerifyReceiptURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
  static let sandboxVerifyReceiptURL = URL(
    string: "https://sandbox.itunes.apple.com/verifyReceipt")!

  /// Whether purchases from `environment` (Apple's raw spelling) are accepted.
  public func allows(environment: String?) -> Bool {
    guard let environment, let kind = AppStoreEnvironment(rawValue: environment) else {
      return false
    }
    switch kind {
    case .production, .sandbox: return allowedEnvironments.contains(environment)
    case .xcode, .localTesting: return false
    }
  }
}
