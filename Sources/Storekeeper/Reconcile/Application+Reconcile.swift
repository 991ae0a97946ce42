import AppStore
import Foundation
import Postgres
import StorekeeperCore
import StorekeeperLogging

extension Application {
  /// The App Store Server API key when one is configured.
  static func serverAPIKey(_ config: AppConfig) throws -> AppStoreAPIKey? {
    guard let path = config.apiKeyPath, let keyId = config.apiKeyId,
      let issuerId = config.apiIssuerId
    else { return nil }
    guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw ConfigError(variable: "APPLE_API_KEY_FILE", problem: "cannot read \(path)")
    }
    guard let key = AppStoreAPIKey(pem: pem, keyId: keyId, issuerId: issuerId) else {
      throw ConfigError(
        variable: "APPLE_API_KEY_FILE", problem: "\(path) holds no P-256 private key (a .p8 file)")
    }
    return key
  }

  /// The reconciler when an App Store Server API key is configured; nil otherwise.
  static func reconciler(
    _ config: AppConfig, database: PostgresPool, verifier: SignedDataVerifier,
    settlement: SettlementService, catalog: CatalogRepository, clock: WallClock,
    appleSettings: AppleConfigurationMonitor?, logger: Logger
  ) throws -> SubscriptionReconciler? {
    guard let key = try serverAPIKey(config) else { return nil }
    guard let production = URL(string: config.apiURL) else {
      throw ConfigError(variable: "APPLE_API_URL", problem: "must be an http(s) URL")
    }
    guard let sandbox = URL(string: config.apiSandboxURL) else {
      throw ConfigError(variable: "APPLE_API_SANDBOX_URL", problem: "must be an http(s) URL")
    }
    func client(_ url: URL) -> SubscriptionStatusClient {
      SubscriptionStatusClient(
        baseURL: url, key: key, bundleId: config.bundleId,
        timeout: .milliseconds(config.appleTimeoutMs))
    }
    return SubscriptionReconciler(
      database: database, production: client(production), sandbox: client(sandbox),
      verifier: verifier, settlement: settlement, catalog: catalog, clock: clock,
      settings: config.reconcile, appleSettings: appleSettings, logger: logger)
  }
}
