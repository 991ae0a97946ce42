import Postgres

/// One event queued to one endpoint, with every attempt, as the deliveries listing shows it.
package struct WebhookDelivery: Encodable, Sendable {
  var id: Int64
  var endpointId: String
  var eventId: String
  var eventType: String
  var userId: String
  var sequence: Int64
  var kind: WebhookDeliveryKind
  var state: WebhookDeliveryState
  /// None once finished, nor while parked behind an earlier delivery of its user.
  var nextAttemptAt: String?
  var deliveredAt: String?
  var lastError: String?
  var createdAt: String
  var attempts: [WebhookAttempt] = []

  enum CodingKeys: String, CodingKey {
    case id, sequence, kind, state, attempts
    case endpointId = "endpoint_id"
    case eventId = "event_id"
    case eventType = "event_type"
    case userId = "user_id"
    case nextAttemptAt = "next_attempt_at"
    case deliveredAt = "delivered_at"
    case lastError = "last_error"
    case createdAt = "created_at"
  }

  static let columns = """
    d.id, d.endpoint_id::text AS endpoint_id, e.id::text AS event_id, e.type AS event_type,
    d.user_id, d.sequence, d.kind, d.state,
    CASE WHEN d.state = \(WebhookDeliveryState.pending.sqlLiteral)
      AND d.next_attempt_at < 'infinity' THEN \(SQLTime.text("d.next_attempt_at")) END AS next_attempt_at,
    \(SQLTime.rfc3339("d.delivered_at", as: "delivered_at")), d.last_error,
    \(SQLTime.rfc3339("d.created_at", as: "created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    endpointId = try row.decode("endpoint_id")
    eventId = try row.decode("event_id")
    eventType = try row.decode("event_type")
    userId = try row.decode("user_id")
    sequence = try row.decode("sequence")
    kind = try row.decode("kind")
    state = try row.decode("state")
    nextAttemptAt = try row.decodeIfPresent("next_attempt_at")
    deliveredAt = try row.decodeIfPresent("delivered_at")
    lastError = try row.decodeIfPresent("last_error")
    createdAt = try row.decode("created_at")
  }
}
