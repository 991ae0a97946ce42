/// The answer of `GET /fake/v1/notifications/{notification_uuid}`: Apple's notification
/// history entry for it (`sendAttempts`), plus the retries still to come.
struct FakeNotificationHistoryResponse: Encodable, Sendable {
  var notificationUuid: String
  var notificationType: String
  var subtype: String?
  var sendAttempts: [FakeSendAttempt]
  var retriesLeft: Int
}
