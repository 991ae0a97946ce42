import Postgres

/// One `CONSUMPTION_REQUEST` and what was answered, as `consumption_answers` keeps it.
package struct ConsumptionAnswer: Sendable, Encodable {
  /// Where an answer stands.
  package enum State: String, Sendable, Codable, CaseIterable, PostgresEnum {
    /// Not yet answered; tried again at `next_attempt_at`.
    case pending
    /// Apple accepted the answer.
    case sent
    /// Nothing was sent: the user gave no consent, so Apple would refuse any answer.
    case skipped
    /// Apple refused it, or its window closed before it could be sent.
    case failed
  }

  package var notificationUuid: String
  package var transactionId: String
  package var environment: String
  package var state: State
  package var attempts: Int
  package var deadline: String
  package var answer: JSONValue?
  package var outcome: String?
  package var lastError: String?
  package var userId: String?
  package var answeredAt: String?

  enum CodingKeys: String, CodingKey {
    case notificationUuid = "notification_uuid"
    case transactionId = "transaction_id"
    case environment, state, attempts, deadline, answer, outcome
    case lastError = "last_error"
    case userId = "user_id"
    case answeredAt = "answered_at"
  }

  static let columns = """
    notification_uuid, transaction_id, environment, state, attempts,
    \(SQLTime.rfc3339("deadline")), answer::text AS answer, outcome, last_error, user_id,
    \(SQLTime.rfc3339("answered_at"))
    """

  init(row: PostgresRow) throws {
    notificationUuid = try row.decode("notification_uuid")
    transactionId = try row.decode("transaction_id")
    environment = try row.decode("environment")
    state = try row.decode("state")
    attempts = Int(try row.decode("attempts", as: Int32.self))
    deadline = try row.decode("deadline")
    let text: String? = try row.decodeIfPresent("answer")
    answer = try text.map { try JSONValue(databaseText: $0) }
    outcome = try row.decodeIfPresent("outcome")
    lastError = try row.decodeIfPresent("last_error")
    userId = try row.decodeIfPresent("user_id")
    answeredAt = try row.decodeIfPresent("answered_at")
  }
}
