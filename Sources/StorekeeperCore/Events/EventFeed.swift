import Postgres

/// `events` read as a feed, in the order rows become final: (xid, position), and only rows
/// whose inserting transaction is older than every transaction still running
/// (`xid < pg_snapshot_xmin(pg_current_snapshot())`). `position` alone is insertion order, not
/// commit order: a reader past position 10 would never see a row 9 that commits later. Any
/// transaction that can still commit has an xid at or above the snapshot's xmin, so it sorts
/// after every row already read, and a cursor never skips a late commit. The price: one long
/// open transaction holds the feed back until it ends, unless it is one that writes no events
/// and says so (`FeedExemption`, the chart rollup pass): the horizon is then the oldest running
/// transaction not exempt (`horizon`).
///
/// One user's events are read in their `sequence` instead, as the API promises. Their
/// transactions' xids need not follow it: one that took its xid first may append after another
/// that committed meanwhile. Every writer appends under the user's sequence row lock, held to
/// its commit, and the sequence is gap-free, so for one user sequence order is commit order:
/// once event n is visible, every earlier one is, and a cursor past n can skip nothing. Such a
/// read is not held back by other transactions either. The two orders differ, so a cursor
/// reads on only in the feed that handed it out (`EventFeedCursor`): a user's sequence
/// cursor in the whole feed could pass a transaction that commits later, and a whole-feed
/// cursor taken as a sequence could pass an event the whole feed still held back. A whole-feed
/// cursor read with a user id reads that user's events in the whole feed's order.
package struct EventFeed: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  package struct Filter: Sendable {
    package var userId: String?
    package var type: EventType?
    package var after: EventFeedCursor?
    package var limit = 50

    package init(
      userId: String? = nil, type: EventType? = nil, after: EventFeedCursor? = nil, limit: Int = 50
    ) {
      self.userId = userId
      self.type = type
      self.after = after
      self.limit = limit
    }
  }

  package struct Page: Sendable {
    package var events: [Event]
    /// Where to read on from; the given cursor when nothing new was final yet.
    package var next: EventFeedCursor?
    package var hasMore: Bool
  }

  /// A cursor read in a feed that did not hand it out (`EventFeedCursor.reads(userId:)`).
  package struct CursorOfAnotherFeed: Error {}

  package func read(_ filter: Filter) async throws -> Page {
    guard filter.after?.reads(userId: filter.userId) ?? true else { throw CursorOfAnotherFeed() }
    if let user = filter.userId, !Self.isWholeFeed(filter.after) {
      return try await read(user: user, filter)
    }
    var query: PostgresQuery = """
      SELECT \(unescaped: Event.columns) FROM events
      WHERE xid < (\(unescaped: Self.horizon))
      """
    // One user's events read on from a whole-feed cursor: in the whole feed's order, held back
    // as it is, so a cursor taken there skips nothing here either.
    if let user = filter.userId { query.append(" AND user_id = \(user)") }
    if let type = filter.type { query.append(" AND type = \(type)") }
    switch filter.after {
    case .feed(let xid, let position)?, .legacy(let xid, let position)?:
      query.append(" AND (xid, position) > (\(String(xid))::xid8, \(position)::bigint)")
    case .user?, nil: break
    }
    // The table's columns, not the selected `xid` (text, for decoding): sorted as text, 100
    // comes before 99 and a cursor past it would skip 99 for good.
    query.append(" ORDER BY events.xid, events.position LIMIT \(filter.limit + 1)")
    return try await page(query, filter) { $0.cursor }
  }

  private static func isWholeFeed(_ cursor: EventFeedCursor?) -> Bool {
    if case .feed = cursor { return true }
    return false
  }

  /// The first transaction id whose rows may not be final: the oldest transaction running
  /// that may still insert events, or the snapshot's xmax when every one running is exempt.
  /// Every id below it has ended or writes no events. A standby's snapshot lists no running
  /// ids at all (it keeps them with the subtransactions'), only its xmin: there the horizon
  /// is that xmin, as with nothing running on a primary. (An uncorrelated subquery: evaluated
  /// once per read, and the feed's index still bounds the scan.)
  static let horizon = """
    SELECT coalesce(
      (SELECT min(x) FROM pg_snapshot_xip(s) AS x
       WHERE x NOT IN (SELECT xid FROM feed_exempt_transactions)),
      CASE WHEN EXISTS (SELECT FROM pg_snapshot_xip(s)) THEN pg_snapshot_xmax(s)
           ELSE pg_snapshot_xmin(s) END)
    FROM pg_current_snapshot() AS s
    """

  /// One user's events in sequence order, after the sequence its cursor names.
  private func read(user: String, _ filter: Filter) async throws -> Page {
    var query: PostgresQuery =
      "SELECT \(unescaped: Event.columns) FROM events WHERE user_id = \(user)"
    if let type = filter.type { query.append(" AND type = \(type)") }
    switch filter.after {
    case .user(_, let sequence)?:
      query.append(" AND sequence > \(sequence)::bigint")
    case .legacy(let xid, let position)?:
      // As this feed read such a cursor before the two kinds: after the sequence of the event
      // it names when that is this user's, else after it in the whole feed's order.
      query.append(
        """
         AND coalesce(
          sequence > (SELECT c.sequence FROM events c WHERE c.user_id = \(user)
                      AND c.xid = \(String(xid))::xid8 AND c.position = \(position)::bigint),
          (xid, position) > (\(String(xid))::xid8, \(position)::bigint))
        """)
    case .feed?, nil: break
    }
    query.append(" ORDER BY sequence LIMIT \(filter.limit + 1)")
    let key = EventFeedCursor.key(of: user)
    return try await page(query, filter) { .user(key: key, sequence: $0.sequence) }
  }

  private func page(
    _ query: PostgresQuery, _ filter: Filter, cursor: (Event) -> EventFeedCursor
  ) async throws -> Page {
    let rows = try await database.query(query).map(Event.init(row:))
    let events = Array(rows.prefix(filter.limit))
    return Page(
      events: events, next: events.last.map(cursor) ?? filter.after,
      hasMore: rows.count > filter.limit)
  }
}
