/// The customer's download of the app, as the App Store signs it (`JWSAppTransaction`): one
/// `appTransactionId` per Apple Account (and per family member) for the app, kept across
/// re-downloads, devices, refunds and storefronts. Every field is optional, as in Apple's
/// models.
public struct AppTransaction: Codable, Sendable, Equatable {
  /// "Production", "Sandbox" or "Xcode": the environment the app transaction belongs to.
  public var receiptType: String?
  public var appAppleId: Int64?
  public var bundleId: String?
  public var applicationVersion: String?
  public var versionExternalIdentifier: Int64?
  public var receiptCreationDate: Int64?
  public var originalPurchaseDate: Int64?
  public var originalApplicationVersion: String?
  public var deviceVerification: String?
  public var deviceVerificationNonce: String?
  public var preorderDate: Int64?
  public var appTransactionId: String?
  public var originalPlatform: String?

  public init(
    receiptType: String? = nil, appAppleId: Int64? = nil, bundleId: String? = nil,
    applicationVersion: String? = nil, versionExternalIdentifier: Int64? = nil,
    receiptCreationDate: Int64? = nil, originalPurchaseDate: Int64? = nil,
    originalApplicationVersion: String? = nil, deviceVerification: String? = nil,
    deviceVerificationNonce: String? = nil, preorderDate: Int64? = nil,
    appTransactionId: String? = nil, originalPlatform: String? = nil
  ) {
    self.receiptType = receiptType
    self.appAppleId = appAppleId
    self.bundleId = bundleId
    self.applicationVersion = applicationVersion
    self.versionExternalIdentifier = versionExternalIdentifier
    self.receiptCreationDate = receiptCreationDate
    self.originalPurchaseDate = originalPurchaseDate
    self.originalApplicationVersion = originalApplicationVersion
    self.deviceVerification = deviceVerification
    self.deviceVerificationNonce = deviceVerificationNonce
    self.preorderDate = preorderDate
    self.appTransactionId = appTransactionId
    self.originalPlatform = originalPlatform
  }

  private enum CodingKeys: String, CodingKey {
    case receiptType, appAppleId, bundleId, applicationVersion, versionExternalIdentifier,
      receiptCreationDate, originalPurchaseDate, originalApplicationVersion, deviceVerification,
      deviceVerificationNonce, preorderDate, appTransactionId, originalPlatform
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    receiptType = container.lenient(.receiptType)
    appAppleId = container.lenient(.appAppleId)
    bundleId = container.lenient(.bundleId)
    applicationVersion = container.lenient(.applicationVersion)
    versionExternalIdentifier = container.lenient(.versionExternalIdentifier)
    receiptCreationDate = container.lenient(.receiptCreationDate)
    originalPurchaseDate = container.lenient(.originalPurchaseDate)
    originalApplicationVersion = container.lenient(.originalApplicationVersion)
    deviceVerification = container.lenient(.deviceVerification)
    deviceVerificationNonce = container.lenient(.deviceVerificationNonce)
    preorderDate = container.lenient(.preorderDate)
    appTransactionId = container.lenient(.appTransactionId)
    originalPlatform = container.lenient(.originalPlatform)
  }
}

/// Apple's library judges an app transaction's chain at its receipt's creation date.
extension AppTransaction: SignedPayload {
  var signedDate: Int64? { receiptCreationDate }
}
