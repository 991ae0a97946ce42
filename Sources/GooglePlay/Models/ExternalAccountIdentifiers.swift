/// `ExternalAccountIdentifiers`: what the app set in `BillingFlowParams`.
/// `obfuscatedExternalAccountId` is Google's counterpart of Apple's `appAccountToken`.
public struct ExternalAccountIdentifiers: Sendable, Decodable, Equatable {
  public var externalAccountId: String?
  public var obfuscatedExternalAccountId: String?
  public var obfuscatedExternalProfileId: String?
}
