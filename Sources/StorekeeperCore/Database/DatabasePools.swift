import Postgres
import StorekeeperLogging

/// The three ways to the database, built once from the configuration (`init(config:logger:)`).
///
/// Routing a query is a one-line choice where its repository is built: `primary` for anything
/// a client may read right after its own write (orders, entitlements, settlement), `reads` for
/// heavy reads that tolerate a little staleness (admin listings and searches, exports and
/// feeds read by cursor). Without `DATABASE_READ_URL`, `reads` is a pool of its own to the
/// primary, so heavy reads never hold the connections payments need.
package struct DatabasePools: Sendable {
  /// `DATABASE_URL`: every request and background statement; may be a transaction pooler.
  package let primary: PostgresPool
  /// `DATABASE_READ_URL`'s pool, else `DB_READ_POOL_SIZE` connections of its own to
  /// `DATABASE_URL`.
  package let reads: PostgresPool
  /// `DATABASE_DIRECT_URL`'s small pool (the migrator's session lock), else `primary`.
  package let direct: PostgresPool
  /// The replica's own pool when there is one (for its lag and metrics).
  package let replica: PostgresPool?
  /// The session-holding connections' URL (the catalog's LISTEN).
  package let sessionURL: String

  package init(
    primary: PostgresPool, reads: PostgresPool, direct: PostgresPool, replica: PostgresPool?,
    sessionURL: String
  ) {
    self.primary = primary
    self.reads = reads
    self.direct = direct
    self.replica = replica
    self.sessionURL = sessionURL
  }

  package func shutdown() async {
    await primary.shutdown()
    if let replica { await replica.shutdown() }
    if reads !== primary && reads !== replica { await reads.shutdown() }
    if direct !== primary { await direct.shutdown() }
  }
}
