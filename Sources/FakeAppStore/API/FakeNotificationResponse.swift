/// The answer of `POST /fake/v1/refunds`, `/renewals` and `/notifications`.
struct FakeNotificationResponse: Encodable, Sendable {
  var notificationUuid: String
  var notificationType: String
  var subtype: String?
  var signedPayload: String
  /// The receiver's HTTP status; null when not delivered or no answer came.
  var deliveredStatus: Int?
  /// Why delivery failed, or that there was nowhere to deliver.
  var deliveryError: String?
  /// Retries still to come after the first attempt (production only); absent when not sent.
  var retriesLeft: Int?
  var transactionId: String?
  /// The transaction as it stands after the change (refund marked, renewal made).
  var signedTransaction: String?

  private enum CodingKeys: String, CodingKey {
    case notificationUuid, notificationType, subtype, signedPayload, deliveredStatus,
      deliveryError, retriesLeft, transactionId, signedTransaction
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(notificationUuid, forKey: .notificationUuid)
    try container.encode(notificationType, forKey: .notificationType)
    try container.encodeIfPresent(subtype, forKey: .subtype)
    try container.encode(signedPayload, forKey: .signedPayload)
    // Always present, null when nothing answered: callers test it without a key check.
    try container.encode(deliveredStatus, forKey: .deliveredStatus)
    try container.encodeIfPresent(deliveryError, forKey: .deliveryError)
    try container.encodeIfPresent(retriesLeft, forKey: .retriesLeft)
    try container.encodeIfPresent(transactionId, forKey: .transactionId)
    try container.encodeIfPresent(signedTransaction, forKey: .signedTransaction)
  }
}
