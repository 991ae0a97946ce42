/// The app and the signed transaction / renewal info a notification is about.
public struct NotificationData: Codable, Sendable, Equatable {
  public var appAppleId: Int64?
  public var bundleId: String?
  public var bundleVersion: String?
  public var environment: String?
  public var signedTransactionInfo: String?
  public var signedRenewalInfo: String?
  public var status: Int32?
  public var consumptionRequestReason: String?

  public var environmentValue: AppStoreEnvironment? {
    environment.flatMap(AppStoreEnvironment.init(rawValue:))
  }
  public var statusValue: SubscriptionStatus? { status.flatMap(SubscriptionStatus.init(rawValue:)) }

  public init(
    appAppleId: Int64? = nil,
    bundleId: String? = nil,
    bundleVersion: String? = nil,
    environment: String? = nil,
    signedTransactionInfo: String? = nil,
    signedRenewalInfo: String? = nil,
    status: Int32? = nil,
    consumptionRequestReason: String? = nil
  ) {
    self.appAppleId = appAppleId
    self.bundleId = bundleId
    self.bundleVersion = bundleVersion
    self.environment = environment
    self.signedTransactionInfo = signedTransactionInfo
    self.signedRenewalInfo = signedRenewalInfo
    self.status = status
    self.consumptionRequestReason = consumptionRequestReason
  }

  private enum CodingKeys: String, CodingKey {
    case appAppleId, bundleId, bundleVersion, environment, signedTransactionInfo, signedRenewalInfo,
      status, consumptionRequestReason
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    appAppleId = container.lenient(.appAppleId)
    bundleId = container.lenient(.bundleId)
    bundleVersion = container.lenient(.bundleVersion)
    environment = container.lenient(.environment)
    signedTransactionInfo = container.lenient(.signedTransactionInfo)
    signedRenewalInfo = container.lenient(.signedRenewalInfo)
    status = container.lenient(.status)
    consumptionRequestReason = container.lenient(.consumptionRequestReason)
  }
}
