import Postgres

/// The admin listing of the notifications Apple sent, newest first, in keyset pages.
package struct NotificationListing: Sendable {
  /// Which notifications a page holds; nil fields do not filter.
  package struct Filter: Sendable {
    package var notificationType: String?
    package var state: NotificationState?
    package var transactionId: String?
    package var before: Int64?
    package var limit = 50

    package init(
      notificationType: String? = nil, state: NotificationState? = nil,
      transactionId: String? = nil, before: Int64? = nil, limit: Int = 50
    ) {
      self.notificationType = notificationType
      self.state = state
      self.transactionId = transactionId
      self.before = before
      self.limit = limit
    }
  }

  /// Where the listing reads: the read replica when there is one.
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  /// Up to `filter.limit` notifications, and the cursor of the next page.
  package func list(_ filter: Filter) async throws -> (items: [NotificationView], next: String?) {
    var sql: PostgresQuery =
      "SELECT \(unescaped: NotificationView.columns) FROM apple_notifications WHERE true"
    if let type = filter.notificationType { sql.append(" AND notification_type = \(type)") }
    if let state = filter.state { sql.append(" AND state = \(state)") }
    if let id = filter.transactionId { sql.append(" AND transaction_id = \(id)") }
    if let seq = filter.before { sql.append(" AND seq < \(seq)") }
    let limit = filter.limit
    sql.append(" ORDER BY seq DESC LIMIT \(limit + 1)")
    let rows = try await database.query(sql)
    let items = try rows.prefix(limit).map(NotificationView.init(row:))
    var next: String?
    if rows.count > limit, let last = rows.prefix(limit).last {
      let seq: Int64 = try last.decode("seq")
      next = String(seq)
    }
    return (items, next)
  }
}
