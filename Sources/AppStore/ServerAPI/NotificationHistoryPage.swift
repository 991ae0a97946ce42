/// One page of the App Store Server API's notification history.
public struct NotificationHistoryPage: Sendable, Decodable {
  public struct Item: Sendable, Decodable {
    public var signedPayload: String
    public var sendAttempts: [SendAttempt]?
  }

  public struct SendAttempt: Sendable, Decodable {
    public var attemptDate: Int64?
    public var sendAttemptResult: String?
  }

  public var notificationHistory: [Item]
  public var hasMore: Bool
  /// Asks for the next page; present when `hasMore`.
  public var paginationToken: String?
}
