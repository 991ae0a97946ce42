import Postgres
import StorekeeperLogging

/// The three ways to the database, built once from the configuration.
///
/// Routing a query is a one-line choice where its repository is built: `primary` for anything
/// a client may read right after its own write (orders, entitlements, settlement), `reads` for
/// heavy reads that tolerate a little staleness (admin listings and searches, exports and
/// feeds read by cursor). Without `DATABASE_READ_URL`, `reads` is the primary pool itself.
struct DatabasePools: Sendable {
  /// `DATABASE_URL`: every request and background statement; may be a transaction pooler.
  let primary: PostgresPool
  /// `DATABASE_READ_URL`'s pool, else `primary`.
  let reads: PostgresPool
  /// `DATABASE_DIRECT_URL`'s small pool (the migrator's session lock), else `primary`.
  let direct: PostgresPool
  /// The replica's own pool when there is one (for its lag and metrics).
  let replica: PostgresPool?
  /// The session-holding connections' URL (the catalog's LISTEN).
  let sessionURL: String

  init(config: AppConfig, logger: Logger) {
    var poolConfig = PostgresConfiguration(url: config.databaseURL)
    poolConfig.maxConnections = config.databasePoolSize
    poolConfig.statementCacheCapacity = config.statementCacheSize
    primary = PostgresPool(configuration: poolConfig, logger: logger.with("component", "postgres"))
    if let url = config.databaseReadURL {
      var readConfig = PostgresConfiguration(url: url)
      readConfig.maxConnections = config.databaseReadPoolSize
      readConfig.statementCacheCapacity = config.statementCacheSize
      let replica = PostgresPool(
        configuration: readConfig, logger: logger.with("component", "postgres-replica"))
      self.replica = replica
      reads = replica
    } else {
      replica = nil
      reads = primary
    }
    if let url = config.databaseDirectURL {
      var directConfig = PostgresConfiguration(url: url)
      // Only the migrator borrows it, once per start (and `/readyz` never does).
      directConfig.maxConnections = 1
      directConfig.statementCacheCapacity = 0
      direct = PostgresPool(
        configuration: directConfig, logger: logger.with("component", "postgres-direct"))
    } else {
      direct = primary
    }
    sessionURL = config.sessionDatabaseURL
  }

  func shutdown() async {
    await primary.shutdown()
    if let replica { await replica.shutdown() }
    if direct !== primary { await direct.shutdown() }
  }
}
