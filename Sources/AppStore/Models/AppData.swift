/// The app and its signed app transaction, in a notification that concerns the app rather than
/// a purchase (`appData`, present for `RESCIND_CONSENT`).
public struct AppData: Codable, Sendable, Equatable {
  public var appAppleId: Int64?
  public var bundleId: String?
  public var environment: String?
  /// A JWS of `AppTransaction`.
  public var signedAppTransactionInfo: String?

  public init(
    appAppleId: Int64? = nil, bundleId: String? = nil, environment: String? = nil,
    signedAppTransactionInfo: String? = nil
  ) {
    self.appAppleId = appAppleId
    self.bundleId = bundleId
    self.environment = environment
    self.signedAppTransactionInfo = signedAppTransactionInfo
  }

  private enum CodingKeys: String, CodingKey {
    case appAppleId, bundleId, environment, signedAppTransactionInfo
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    appAppleId = container.lenient(.appAppleId)
    bundleId = container.lenient(.bundleId)
    environment = container.lenient(.environment)
    signedAppTransactionInfo = container.lenient(.signedAppTransactionInfo)
  }
}
