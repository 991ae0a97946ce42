import Postgres

/// One row of `events` as the feed and webhooks show it.
package struct Event: Encodable, Sendable {
  var id: String
  var type: String
  var createdAt: String
  var userId: String
  var sequence: Int64
  var data: JSONValue
  var userState: JSONValue
  /// Where the feed stands after this event (not shown).
  var cursor: EventFeedCursor

  enum CodingKeys: String, CodingKey {
    case id, type
    case createdAt = "created_at"
    case userId = "user_id"
    case sequence, data
    case userState = "user_state"
  }

  static let columns = """
    position, id::text AS id, type, \(SQLTime.rfc3339("created_at")), user_id, sequence,
    data::text AS data, user_state::text AS user_state, xid::text AS xid
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    type = try row.decode("type")
    createdAt = try row.decode("created_at")
    userId = try row.decode("user_id")
    sequence = try row.decode("sequence")
    data = try JSONValue(databaseText: try row.decode("data"))
    userState = try JSONValue(databaseText: try row.decode("user_state"))
    let xid: String = try row.decode("xid")
    guard let transaction = UInt64(xid) else { throw EventFeedCursor.Malformed() }
    cursor = EventFeedCursor(xid: transaction, position: try row.decode("position"))
  }
}
