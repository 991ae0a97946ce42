/// The outcome of a subscription-renewal-date extension for many customers.
public struct NotificationSummary: Codable, Sendable, Equatable {
  public var requestIdentifier: String?
  public var environment: String?
  public var appAppleId: Int64?
  public var bundleId: String?
  public var productId: String?
  public var storefrontCountryCodes: [String]?
  public var failedCount: Int64?
  public var succeededCount: Int64?

  public var environmentValue: AppStoreEnvironment? {
    environment.flatMap(AppStoreEnvironment.init(rawValue:))
  }

  public init(
    requestIdentifier: String? = nil,
    environment: String? = nil,
    appAppleId: Int64? = nil,
    bundleId: String? = nil,
    productId: String? = nil,
    storefrontCountryCodes: [String]? = nil,
    failedCount: Int64? = nil,
    succeededCount: Int64? = nil
  ) {
    self.requestIdentifier = requestIdentifier
    self.environment = environment
    self.appAppleId = appAppleId
    self.bundleId = bundleId
    self.productId = productId
    self.storefrontCountryCodes = storefrontCountryCodes
    self.failedCount = failedCount
    self.succeededCount = succeededCount
  }

  private enum CodingKeys: String, CodingKey {
    case requestIdentifier, environment, appAppleId, bundleId, productId, storefrontCountryCodes,
      failedCount, succeededCount
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    requestIdentifier = container.lenient(.requestIdentifier)
    environment = container.lenient(.environment)
    appAppleId = container.lenient(.appAppleId)
    bundleId = container.lenient(.bundleId)
    productId = container.lenient(.productId)
    storefrontCountryCodes = container.lenient(.storefrontCountryCodes)
    failedCount = container.lenient(.failedCount)
    succeededCount = container.lenient(.succeededCount)
  }
}
