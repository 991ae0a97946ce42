/// One Pub/Sub push request as received: the message's envelope and the developer
/// notification its `data` carries.
public struct PubSubPush: Sendable, Equatable {
  /// Unique per message within the subscription: what redeliveries are deduplicated by.
  public var messageId: String
  /// `projects/{project}/subscriptions/{name}`.
  public var subscription: String
  /// RFC 3339, when Pub/Sub accepted the message.
  public var publishTime: String?
  public var attributes: [String: String]
  public var notification: DeveloperNotification
}
