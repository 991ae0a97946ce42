import Postgres
import StorekeeperLogging

/// A long transaction that writes no events names itself in `feed_exempt_transactions`, so the
/// unfiltered event feed, which otherwise shows nothing newer than the oldest transaction still
/// running, does not wait for it (`EventFeed.horizon`, Migrations/0124). The name is written
/// from another session: the transaction's own rows are seen only once it commits. A
/// transaction so named must never insert an event: a reader past its id would skip it.
package struct FeedExemption: Sendable {
  let database: PostgresPool
  let logger: Logger

  package init(database: PostgresPool, logger: Logger) {
    self.database = database
    self.logger = logger
  }

  /// Names the transaction `tx` runs in; its id, or nil when it could not be named (no free
  /// session within a second, or a database error): the feed then waits for it, as it would
  /// without this, and nothing else changes.
  package func register(_ tx: PostgresTransaction, reason: String) async -> String? {
    do {
      guard
        let xid: String = try await tx.query("SELECT pg_current_xact_id()::text AS xid").first?
          .decode("xid")
      else { return nil }
      // Rows of transactions that ended (a process that died holding one) go with it.
      try await database.execute(
        """
        WITH gone AS (
          DELETE FROM feed_exempt_transactions
          WHERE xid < pg_snapshot_xmin(pg_current_snapshot()))
        INSERT INTO feed_exempt_transactions (xid, reason) VALUES (\(xid)::xid8, \(reason))
        """, acquireTimeout: .seconds(1))
      return xid
    } catch {
      logger.warning(
        "the event feed waits for this transaction: it could not be named as writing no events",
        ["reason": .string(reason), "error": .string(String(describing: error))])
      return nil
    }
  }

  /// Removes the name once its transaction ended (a row left behind is removed by the next
  /// registration).
  package func remove(_ xid: String) async {
    do {
      try await database.execute(
        "DELETE FROM feed_exempt_transactions WHERE xid = \(xid)::xid8", acquireTimeout: .seconds(1)
      )
    } catch {
      logger.debug("an event feed exemption stays until the next registration")
    }
  }
}
