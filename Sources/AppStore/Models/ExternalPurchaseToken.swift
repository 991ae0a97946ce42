/// An External Purchase token a notification reports.
public struct ExternalPurchaseToken: Codable, Sendable, Equatable {
  public var externalPurchaseId: String?
  public var tokenCreationDate: Int64?
  public var appAppleId: Int64?
  public var bundleId: String?

  public init(
    externalPurchaseId: String? = nil,
    tokenCreationDate: Int64? = nil,
    appAppleId: Int64? = nil,
    bundleId: String? = nil
  ) {
    self.externalPurchaseId = externalPurchaseId
    self.tokenCreationDate = tokenCreationDate
    self.appAppleId = appAppleId
    self.bundleId = bundleId
  }

  private enum CodingKeys: String, CodingKey {
    case externalPurchaseId, tokenCreationDate, appAppleId, bundleId
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    externalPurchaseId = container.lenient(.externalPurchaseId)
    tokenCreationDate = container.lenient(.tokenCreationDate)
    appAppleId = container.lenient(.appAppleId)
    bundleId = container.lenient(.bundleId)
  }
}
