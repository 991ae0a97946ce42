/// The answer of the App Store Server API's Get All Subscription Statuses
/// (`StatusResponse`): for the customer who owns the transaction asked about, every
/// subscription group of the app with the latest transaction of each subscription in it.
/// The signed fields are JWS, still to be verified.
public struct SubscriptionStatuses: Sendable, Decodable {
  public struct Group: Sendable, Decodable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransaction]
  }

  public struct LastTransaction: Sendable, Decodable {
    public var originalTransactionId: String
    /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public var status: Int32
    public var signedTransactionInfo: String
    public var signedRenewalInfo: String

    public var statusValue: SubscriptionStatus? { SubscriptionStatus(rawValue: status) }
  }

  public var environment: String?
  public var bundleId: String?
  public var appAppleId: Int64?
  public var data: [Group]

  /// The entry of one subscription, nil when Apple did not list it.
  public func last(originalTransactionId: String) -> LastTransaction? {
    for group in data {
      if let entry = group.lastTransactions.first(where: {
        $0.originalTransactionId == originalTransactionId
      }) {
        return entry
      }
    }
    return nil
  }
}
