import Postgres

/// `events` read as a feed, in the order rows become final: (xid, position), and only rows
/// whose inserting transaction is older than every transaction still running
/// (`xid < pg_snapshot_xmin(pg_current_snapshot())`). `position` alone is insertion order, not
/// commit order: a reader past position 10 would never see a row 9 that commits later. Any
/// transaction that can still commit has an xid at or above the snapshot's xmin, so it sorts
/// after every row already read, and a cursor never skips a late commit. The price: one long
/// open transaction holds the feed back until it ends.
struct EventFeed: Sendable {
  let database: PostgresPool

  struct Filter: Sendable {
    var userId: String?
    var type: EventType?
    var after: EventFeedCursor?
    var limit = 50
  }

  struct Page: Sendable {
    var events: [Event]
    /// Where to read on from; the given cursor when nothing new was final yet.
    var next: EventFeedCursor?
    var hasMore: Bool
  }

  func read(_ filter: Filter) async throws -> Page {
    var query: PostgresQuery = """
      SELECT \(unescaped: Event.columns) FROM events
      WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
      """
    if let user = filter.userId { query.append(" AND user_id = \(user)") }
    if let type = filter.type { query.append(" AND type = \(type)") }
    if let after = filter.after {
      query.append(
        " AND (xid, position) > (\(String(after.xid))::xid8, \(after.position)::bigint)")
    }
    query.append(" ORDER BY xid, position LIMIT \(filter.limit + 1)")
    let rows = try await database.query(query).map(Event.init(row:))
    let events = Array(rows.prefix(filter.limit))
    return Page(
      events: events, next: events.last?.cursor ?? filter.after, hasMore: rows.count > filter.limit)
  }
}
