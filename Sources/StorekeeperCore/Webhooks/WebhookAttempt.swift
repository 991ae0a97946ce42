import Postgres

/// One attempt to deliver, as the deliveries listing shows it.
struct WebhookAttempt: Encodable, Sendable {
  var attemptedAt: String
  var durationMs: Int
  var outcome: WebhookQueue.Outcome
  var statusCode: Int?
  var responseExcerpt: String?
  var error: String?

  enum CodingKeys: String, CodingKey {
    case outcome, error
    case attemptedAt = "attempted_at"
    case durationMs = "duration_ms"
    case statusCode = "status_code"
    case responseExcerpt = "response_excerpt"
  }

  static let columns = """
    delivery_id, \(SQLTime.rfc3339("attempted_at")), duration_ms, outcome, status_code,
    response_excerpt, error
    """

  init(row: PostgresRow) throws {
    attemptedAt = try row.decode("attempted_at")
    durationMs = try row.decode("duration_ms")
    outcome = try row.decode("outcome")
    statusCode = try row.decodeIfPresent("status_code")
    responseExcerpt = try row.decodeIfPresent("response_excerpt")
    error = try row.decodeIfPresent("error")
  }
}
