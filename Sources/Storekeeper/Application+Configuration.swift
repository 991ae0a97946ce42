import AppStore
import Foundation
import StorekeeperCore
import StorekeeperLogging
import StorekeeperWorkers

/// What the configuration makes of Apple's settings and files, for the builders of the domain,
/// the API and the workers.
extension Application {
  /// The notification history's clients when a key is configured, one per environment this
  /// server accepts (each at its own host); none leaves recovery off.
  static func notificationHistoryClients(_ config: AppConfig) throws
    -> [(NotificationRecovery.Environment, NotificationHistoryClient)]
  {
    guard let key = try serverAPIKey(config) else { return [] }
    let hosts = try serverAPIHosts(config)
    let readers: [(NotificationRecovery.Environment, URL)] = [
      (.production, hosts.production), (.sandbox, hosts.sandbox),
    ]
    return readers.filter { config.environments.contains($0.0.name) }.map { environment, url in
      (
        environment,
        NotificationHistoryClient(
          baseURL: url, key: key, bundleId: config.bundleId,
          timeout: .milliseconds(config.appleTimeoutMs))
      )
    }
  }

  /// The Set App Account Token sender when a key is configured (the settlement queues its
  /// calls only then).
  static func accountTokenSender(_ config: AppConfig, domain: Domain, logger: Logger) throws
    -> AccountTokenSender?
  {
    guard let key = try serverAPIKey(config) else { return nil }
    let hosts = try serverAPIHosts(config)
    return AccountTokenSender(
      jobs: AccountTokenJobs(
        database: domain.database,
        policy: RetryPolicy(baseMs: config.retryBaseMs, windowMs: config.retryWindowMs)),
      client: AppAccountTokenClient(
        key: key, bundleId: config.bundleId, timeout: .milliseconds(config.appleTimeoutMs)),
      productionURL: hosts.production, sandboxURL: hosts.sandbox,
      logger: logger.with("component", "app-account-tokens"))
  }

  /// The Send Consumption Information client when a key is configured; nil leaves consumption
  /// requests listed but unanswered.
  static func consumptionClient(_ config: AppConfig) throws -> ConsumptionInformationClient? {
    guard let key = try serverAPIKey(config) else { return nil }
    let hosts = try serverAPIHosts(config)
    return ConsumptionInformationClient(
      productionURL: hosts.production, sandboxURL: hosts.sandbox, key: key,
      bundleId: config.bundleId, timeout: .milliseconds(config.appleTimeoutMs))
  }

  /// The App Store Server API's two hosts, production and the sandbox.
  private static func serverAPIHosts(_ config: AppConfig) throws -> (production: URL, sandbox: URL)
  {
    guard let production = URL(string: config.apiURL) else {
      throw ConfigError(variable: "APPLE_API_URL", problem: "must be an http(s) URL")
    }
    guard let sandbox = URL(string: config.apiSandboxURL) else {
      throw ConfigError(variable: "APPLE_API_SANDBOX_URL", problem: "must be an http(s) URL")
    }
    return (production, sandbox)
  }

  /// The promotional offer signer when a key is configured; nil leaves offers off.
  static func offerSigner(_ config: AppConfig) throws -> PromotionalOfferSigner? {
    guard let (path, keyId, variable) = config.offerKey else { return nil }
    guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw ConfigError(variable: variable, problem: "cannot read \(path)")
    }
    guard let key = P256PrivateKey(pem: pem) else {
      throw ConfigError(
        variable: variable, problem: "\(path) holds no P-256 private key (a .p8 file)")
    }
    return PromotionalOfferSigner(key: key, keyId: keyId, bundleId: config.bundleId)
  }

  static func appStoreConfiguration(_ config: AppConfig, logger: Logger) throws
    -> AppStoreConfiguration
  {
    var appStore = AppStoreConfiguration(bundleId: config.bundleId)
    appStore.appAppleId = config.appAppleId
    appStore.allowedEnvironments = config.environments
    appStore.sharedSecret = config.sharedSecret
    appStore.receiptTimeout = .milliseconds(config.appleTimeoutMs)
    if let url = URL(string: config.verifyReceiptURL) { appStore.verifyReceiptURL = url }
    if let url = URL(string: config.verifyReceiptSandboxURL) {
      appStore.verifyReceiptSandboxURL = url
    }
    for path in config.rootCertificatePaths {
      guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw ConfigError(variable: "APPLE_ROOT_CERTS", problem: "cannot read \(path)")
      }
      appStore.extraRootCertificatesPEM.append(pem)
      logger.warning(
        "trusting an extra root certificate besides Apple's: use this only for tests and demos",
        ["path": .string(path)])
    }
    return appStore
  }

  /// The contract is served as it is in the repository; without it start-up stops.
  static func openAPI(_ config: AppConfig) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: config.openAPIPath), !data.isEmpty else {
      throw ConfigError(
        variable: "OPENAPI_PATH", problem: "names no readable file: \(config.openAPIPath)")
    }
    return Array(data)
  }
}
