import Postgres
import StorekeeperCore

/// Where the database connections go when PostgreSQL sits behind a pooler and has a replica.
///
/// `DATABASE_URL` feeds the pool of request and worker statements (a pooler in a large
/// deployment). `DATABASE_DIRECT_URL` reaches the primary itself, for what needs a real
/// session: `LISTEN` for catalog changes and the migrator's advisory lock. `DATABASE_READ_URL`
/// is a streaming replica for heavy admin reads that tolerate staleness (the event feed,
/// charts, the overview, exports, listings: `Edge`).
extension AppConfig {
  static func readDatabase(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    config.databaseDirectURL = try reader.databaseURL("DATABASE_DIRECT_URL")
    config.databaseReadURL = try reader.databaseURL("DATABASE_READ_URL")
    config.databaseReadPoolSize =
      try reader.integer("DB_READ_POOL_SIZE", 1...500) ?? config.databaseReadPoolSize
    if let text = env["DB_POOL_MODE"], !text.isEmpty {
      guard let mode = DatabasePoolMode(rawValue: text) else {
        throw ConfigError(
          variable: "DB_POOL_MODE", problem: "must be session or transaction, got \"\(text)\"")
      }
      config.databasePoolMode = mode
    }
    guard config.databasePoolMode == .transaction else { return }
    // A transaction pooler loses prepared statements between transactions, unless it tracks
    // protocol-level ones itself (PgBouncer 1.21+ with max_prepared_statements): an explicit
    // DB_STATEMENT_CACHE_SIZE is then honoured.
    if (env["DB_STATEMENT_CACHE_SIZE"] ?? "").isEmpty { config.statementCacheSize = 0 }
    guard let direct = config.databaseDirectURL else {
      throw ConfigError(
        variable: "DATABASE_DIRECT_URL",
        problem:
          "is required with DB_POOL_MODE=transaction: LISTEN and the migration lock need a session of their own on the primary"
      )
    }
    // The pooler's own URL again (copied to satisfy the check above) starts and is ready, but
    // a LISTEN through a transaction pooler is dropped with its transaction: no catalog change
    // would ever reach this instance, silently.
    if PostgresConnectionString(direct).sharesServerAndDatabase(
      with: PostgresConnectionString(config.databaseURL), defaultPort: env["PGPORT"] ?? "5432")
    {
      throw ConfigError(
        variable: "DATABASE_DIRECT_URL",
        problem:
          "names the same host, port and database as DATABASE_URL, the transaction pooler (DB_POOL_MODE=transaction): a LISTEN through it is lost with its transaction, so catalog changes would never reach this instance, and the migration lock would not hold; point it at PostgreSQL itself (or a session-mode pool)"
      )
    }
  }

  /// Where sessions that must outlive a transaction go: the primary directly when given.
  var sessionDatabaseURL: String { databaseDirectURL ?? databaseURL }
}
