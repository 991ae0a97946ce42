import Postgres

/// One recorded state change of an order.
package struct OrderEvent: Encodable, Sendable {
  var id: Int64
  var fromStatus: String?
  var toStatus: String
  package var reason: String?
  var cause: String
  var detail: JSONValue
  var createdAt: String

  enum CodingKeys: String, CodingKey {
    case id
    case fromStatus = "from_status"
    case toStatus = "to_status"
    case reason, cause, detail
    case createdAt = "created_at"
  }

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    fromStatus = try row.decodeIfPresent("from_status")
    toStatus = try row.decode("to_status")
    reason = try row.decodeIfPresent("reason")
    cause = try row.decode("cause")
    detail = try JSONValue(databaseText: try row.decode("detail"))
    createdAt = try row.decode("created_at")
  }

  static let columns = """
    id, from_status, to_status, reason, cause, detail::text AS detail, \(SQLTime.rfc3339("created_at"))
    """
}
