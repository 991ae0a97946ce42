import Postgres
import StorekeeperCore
import StorekeeperLogging

extension DatabasePools {
  /// The pools `DATABASE_URL`, `DATABASE_READ_URL` and `DATABASE_DIRECT_URL` name.
  init(config: AppConfig, logger: Logger) {
    let primary: PostgresPool
    let reads: PostgresPool
    let direct: PostgresPool
    let replica: PostgresPool?
    var poolConfig = PostgresConfiguration(url: config.databaseURL)
    poolConfig.maxConnections = config.databasePoolSize
    poolConfig.statementCacheCapacity = config.statementCacheSize
    primary = PostgresPool(configuration: poolConfig, logger: logger.with("component", "postgres"))
    if let url = config.databaseReadURL {
      var readConfig = PostgresConfiguration(url: url)
      readConfig.maxConnections = config.databaseReadPoolSize
      readConfig.statementCacheCapacity = config.statementCacheSize
      let pool = PostgresPool(
        configuration: readConfig, logger: logger.with("component", "postgres-replica"))
      replica = pool
      reads = pool
    } else {
      // Heavy reads (admin listings, charts, exports, the event feed) get connections of their
      // own to the primary: a few long charts from an admin token could otherwise hold every
      // connection payments need, and orders and reports would wait behind them.
      var readConfig = poolConfig
      readConfig.maxConnections = config.databaseReadPoolSize
      replica = nil
      reads = PostgresPool(
        configuration: readConfig, logger: logger.with("component", "postgres-reads"))
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
    self.init(
      primary: primary, reads: reads, direct: direct, replica: replica,
      sessionURL: config.sessionDatabaseURL)
  }
}
