import Postgres

/// `admin_audit`: every change an admin makes, with the state before and after. Rows are
/// written on the executor of the change (its transaction), never on their own, so the trail
/// and the data cannot disagree.
package struct AuditLog: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  package struct Filter: Sendable {
    package var admin: String?
    package var action: AdminAction?
    package var targetId: String?
    package var limit = 50
    /// The last id of the previous page.
    package var before: Int64?

    package init(
      admin: String? = nil, action: AdminAction? = nil, targetId: String? = nil, limit: Int = 50,
      before: Int64? = nil
    ) {
      self.admin = admin
      self.action = action
      self.targetId = targetId
      self.limit = limit
      self.before = before
    }
  }

  /// Records `action` by `actor` on `targetId`; `before` is nil for a creation, `after` for a
  /// removal.
  static func record<Before: Encodable, After: Encodable>(
    _ action: AdminAction, by actor: AdminActor, targetId: String, before: Before?,
    after: After?, on executor: any PostgresExecutor
  ) async throws {
    let beforeText = try before.map { try JSONCoding.text($0) }
    let afterText = try after.map { try JSONCoding.text($0) }
    try await executor.execute(
      """
      INSERT INTO admin_audit (admin, action, target_type, target_id, before, after, request_id,
                               client_address)
      VALUES (\(actor.name), \(action), \(action.targetType), \(targetId), \(beforeText)::jsonb,
              \(afterText)::jsonb, \(actor.requestId), \(actor.clientAddress))
      """)
  }

  /// Newest first, one keyset page; `next` is the cursor of the following page, if any.
  package func list(_ filter: Filter) async throws -> (entries: [AuditEntry], next: String?) {
    var query: PostgresQuery =
      "SELECT \(unescaped: AuditEntry.columns) FROM admin_audit WHERE true"
    if let admin = filter.admin { query.append(" AND admin = \(admin)") }
    if let action = filter.action { query.append(" AND action = \(action)") }
    if let target = filter.targetId { query.append(" AND target_id = \(target)") }
    if let before = filter.before { query.append(" AND id < \(before)") }
    query.append(" ORDER BY id DESC LIMIT \(filter.limit + 1)")
    let rows = try await database.query(query).map(AuditEntry.init(row:))
    let page = KeysetPage.split(rows, limit: filter.limit) { String($0.id) }
    return (page.items, page.next)
  }
}
