import Foundation

/// `SubscriptionPurchaseV2` of androidpublisher v3 (`purchases.subscriptionsv2.get`): the
/// state of a subscription purchase and its line items. String enums are kept raw and read
/// through typed properties, so a state added later still decodes.
public struct SubscriptionPurchaseV2: Sendable, Decodable, Equatable {
  public var kind: String?
  public var regionCode: String?
  public var lineItems: [SubscriptionPurchaseLineItem]?
  /// `google-datetime`.
  public var startTime: String?
  public var subscriptionState: String?
  /// The token of the purchase this one replaces (upgrade, downgrade, re-signup, plan change):
  /// that one must stop granting.
  public var linkedPurchaseToken: String?
  public var acknowledgementState: String?
  public var externalAccountIdentifiers: ExternalAccountIdentifiers?
  /// Present (an empty object) only for a license tester's purchase.
  public var testPurchase: EmptyObject?
  public var pausedStateContext: PausedStateContext?
  public var canceledStateContext: CanceledStateContext?
  public var etag: String?

  public var subscriptionStateValue: SubscriptionState? {
    subscriptionState.flatMap(SubscriptionState.init)
  }

  public var acknowledgementStateValue: SubscriptionAcknowledgementState? {
    acknowledgementState.flatMap(SubscriptionAcknowledgementState.init)
  }

  public var isAcknowledged: Bool { acknowledgementStateValue == .acknowledged }
  public var isTestPurchase: Bool { testPurchase != nil }
  public var startDate: Date? { GoogleDateTime.date(startTime) }

  /// The latest expiry among the line items: when access ends unless renewed.
  public var latestExpiry: Date? {
    lineItems?.compactMap(\.expiryDate).max()
  }

  public struct PausedStateContext: Sendable, Decodable, Equatable {
    public var autoResumeTime: String?
  }

  /// Which kind of cancellation it was; each present kind is an object.
  public struct CanceledStateContext: Sendable, Decodable, Equatable {
    public struct UserInitiated: Sendable, Decodable, Equatable {
      public var cancelTime: String?
    }
    public var userInitiatedCancellation: UserInitiated?
    public var systemInitiatedCancellation: EmptyObject?
    public var developerInitiatedCancellation: EmptyObject?
    public var replacementCancellation: EmptyObject?
  }
}

/// A schema with no properties (`TestPurchase`, `SystemInitiatedCancellation`, …): what
/// matters is that it is there.
public struct EmptyObject: Sendable, Decodable, Equatable {
  public init() {}
  public init(from decoder: any Decoder) throws {
    _ = try decoder.container(keyedBy: AnyKey.self)
  }

  struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }
}
