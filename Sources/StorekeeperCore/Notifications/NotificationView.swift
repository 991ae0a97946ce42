import Postgres

/// A stored notification as admins see it.
package struct NotificationView: Encodable, Sendable {
  var notificationUuid: String
  var notificationType: String
  var subtype: String?
  var environment: String?
  var signedDate: String?
  var transactionId: String?
  var originalTransactionId: String?
  var state: String
  var result: String?
  var receivedAt: String
  var processedAt: String?
  var payload: JSONValue
  /// For a consumption request: the answer Storekeeper sent Apple (or why it sent none).
  var consumptionAnswer: JSONValue?

  enum CodingKeys: String, CodingKey {
    case notificationUuid = "notification_uuid"
    case notificationType = "notification_type"
    case subtype
    case environment
    case signedDate = "signed_date"
    case transactionId = "transaction_id"
    case originalTransactionId = "original_transaction_id"
    case state, result
    case receivedAt = "received_at"
    case processedAt = "processed_at"
    case payload
    case consumptionAnswer = "consumption_answer"
  }

  static let columns = """
    seq, notification_uuid, notification_type, subtype, environment,
    \(SQLTime.rfc3339("signed_date")), transaction_id, original_transaction_id, state, result,
    \(SQLTime.rfc3339("received_at")), \(SQLTime.rfc3339("processed_at")), payload::text AS payload,
    (SELECT jsonb_strip_nulls(jsonb_build_object(
              'state', c.state, 'attempts', c.attempts, 'answer', c.answer,
              'outcome', c.outcome, 'last_error', c.last_error,
              'deadline', \(SQLTime.text("c.deadline")),
              'answered_at', \(SQLTime.text("c.answered_at"))))::text
     FROM consumption_answers c
     WHERE c.notification_uuid = apple_notifications.notification_uuid) AS consumption_answer
    """

  init(row: PostgresRow) throws {
    notificationUuid = try row.decode("notification_uuid")
    notificationType = try row.decode("notification_type")
    subtype = try row.decodeIfPresent("subtype")
    environment = try row.decodeIfPresent("environment")
    signedDate = try row.decodeIfPresent("signed_date")
    transactionId = try row.decodeIfPresent("transaction_id")
    originalTransactionId = try row.decodeIfPresent("original_transaction_id")
    state = try row.decode("state")
    result = try row.decodeIfPresent("result")
    receivedAt = try row.decode("received_at")
    processedAt = try row.decodeIfPresent("processed_at")
    payload = Self.withoutProofs(try JSONValue(databaseText: try row.decode("payload")))
    let answer: String? = try row.decodeIfPresent("consumption_answer")
    consumptionAnswer = try answer.map { try JSONValue(databaseText: $0) }
  }

  /// The notification's signed fields, each a proof `POST /v1/receipts` accepts: a read-only
  /// admin token must not hand a purchase nobody has claimed yet to whoever posts it first.
  /// Their verified contents stay in the view, decoded (`transaction`, `renewal_info`,
  /// `app_transaction`).
  static let signedFields: Set<String> = [
    "signedTransactionInfo", "signedRenewalInfo", "signedAppTransactionInfo",
  ]

  /// `value` with every member named in `signedFields` left out, at any depth.
  static func withoutProofs(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let members):
      var kept: [String: JSONValue] = [:]
      for (key, member) in members where !signedFields.contains(key) {
        kept[key] = withoutProofs(member)
      }
      return .object(kept)
    case .array(let items): return .array(items.map(withoutProofs))
    default: return value
    }
  }
}
