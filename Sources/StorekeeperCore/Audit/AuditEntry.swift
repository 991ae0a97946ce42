import Postgres

/// One `admin_audit` row as the audit listing shows it.
package struct AuditEntry: Encodable, Sendable {
  var id: Int64
  var admin: String
  var action: AdminAction
  var targetType: AuditTargetType
  var targetId: String
  var before: JSONValue?
  var after: JSONValue?
  var requestId: String
  var clientAddress: String
  var createdAt: String

  enum CodingKeys: String, CodingKey {
    case id, admin, action
    case targetType = "target_type"
    case targetId = "target_id"
    case before, after
    case requestId = "request_id"
    case clientAddress = "client_address"
    case createdAt = "created_at"
  }

  static let columns = """
    id, admin, action, target_type, target_id, before::text AS before, after::text AS after,
    request_id, client_address, \(SQLTime.rfc3339("created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    admin = try row.decode("admin")
    action = try row.decode("action")
    targetType = try row.decode("target_type")
    targetId = try row.decode("target_id")
    before = try row.decodeIfPresent("before", as: String.self).map {
      try JSONValue(databaseText: $0)
    }
    after = try row.decodeIfPresent("after", as: String.self).map {
      try JSONValue(databaseText: $0)
    }
    requestId = try row.decode("request_id")
    clientAddress = try row.decode("client_address")
    createdAt = try row.decode("created_at")
  }
}
