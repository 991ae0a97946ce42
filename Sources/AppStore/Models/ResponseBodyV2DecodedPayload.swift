/// An App Store Server Notification V2 (`signedPayload`), decoded.
///
/// Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData` is normally present.
public struct ResponseBodyV2DecodedPayload: Codable, Sendable, Equatable {
  public var notificationType: String
  public var subtype: String?
  public var notificationUUID: String
  public var version: String?
  public var signedDate: Int64?
  public var data: NotificationData?
  public var summary: NotificationSummary?
  public var externalPurchaseToken: ExternalPurchaseToken?
  public var appData: AppData?

  public var notificationTypeValue: NotificationType? {
    NotificationType(rawValue: notificationType)
  }
  public var subtypeValue: NotificationSubtype? {
    subtype.flatMap(NotificationSubtype.init(rawValue:))
  }

  public init(
    notificationType: String,
    subtype: String? = nil,
    notificationUUID: String,
    version: String? = nil,
    signedDate: Int64? = nil,
    data: NotificationData? = nil,
    summary: NotificationSummary? = nil,
    externalPurchaseToken: ExternalPurchaseToken? = nil,
    appData: AppData? = nil
  ) {
    self.notificationType = notificationType
    self.subtype = subtype
    self.notificationUUID = notificationUUID
    self.version = version
    self.signedDate = signedDate
    self.data = data
    self.summary = summary
    self.externalPurchaseToken = externalPurchaseToken
    self.appData = appData
  }

  private enum CodingKeys: String, CodingKey {
    case notificationType, subtype, notificationUUID, version, signedDate, data, summary,
      externalPurchaseToken, appData
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    notificationType = try container.decode(String.self, forKey: .notificationType)
    subtype = container.lenient(.subtype)
    notificationUUID = try container.decode(String.self, forKey: .notificationUUID)
    version = container.lenient(.version)
    signedDate = container.lenient(.signedDate)
    data = container.lenient(.data)
    summary = container.lenient(.summary)
    externalPurchaseToken = container.lenient(.externalPurchaseToken)
    appData = container.lenient(.appData)
  }
}

extension ResponseBodyV2DecodedPayload: SignedPayload {}
