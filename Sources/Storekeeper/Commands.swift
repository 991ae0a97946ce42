import AppStore
import Foundation
import HTTP
import Postgres
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLogging

/// The subcommands of the `storekeeper` executable, which only dispatches to these.
public enum Commands {
  /// `storekeeper --version`'s line: the release and the commit it was built from.
  public static var version: String { BuildInfo.summary }

  public static let usage = """
    usage: storekeeper <command>
      serve [--no-migrate]   migrate, then serve the API (configuration from the environment)
      migrate                apply pending migrations and exit
      seed-demo              load the demo catalog (five gold packs, three VIP products)
      reconcile [--dry-run] [--limit N]
                             compare subscribers with Apple's subscription statuses, repair
      charts-backfill [--changes]
                             rebuild the charts' rollups now (--changes: one incremental pass)
      export orders|ledger|transactions --from TIME --to TIME [--format csv|jsonl]
                             stream rows over a time range to standard output
      verify --bundle-id ID [--environment Production|Sandbox] [--root FILE.pem] FILE|-
                             verify and print a signed transaction, renewal info or notification
      --version              print the release and the commit this binary was built from
    """

  static func logger(_ level: LogLevel) -> Logger { Logger(label: "storekeeper", level: level) }

  /// A command's failure as its operator needs it: what PostgreSQL said, which a server keeps
  /// out of answers (`PostgresError.description`) but a terminal may show.
  static func failure(_ error: any Error) -> String {
    guard let error = error as? PostgresError, error.kind == .server else { return "\(error)" }
    return "PostgreSQL \(error.sqlState ?? "error"): \(error.message)"
      + (error.detail.map { " (\($0))" } ?? "")
  }

  /// The pool of a one-shot command, without a statement cache: behind a transaction pooler
  /// (PgBouncer, `DB_POOL_MODE=transaction`) a named statement outlives the command on the
  /// server connection it was prepared on, and the next command's statement of the same name
  /// fails there (42P05), or runs another's. A command runs each statement a few times only.
  static func commandPool(url: String, logger: Logger, maxConnections: Int? = nil)
    -> PostgresPool
  {
    var configuration = PostgresConfiguration(url: url)
    configuration.statementCacheCapacity = 0
    if let maxConnections { configuration.maxConnections = maxConnections }
    return PostgresPool(configuration: configuration, logger: logger)
  }

  /// `DATABASE_URL` for a command that needs nothing else; nil, the refusal written, when it
  /// is unset or libpq cannot read it (its passwords masked).
  static func commandDatabaseURL() -> String? {
    do {
      guard
        let url = try ConfigReader(env: ProcessInfo.processInfo.environment)
          .connectionString("DATABASE_URL")
      else { throw ConfigError(variable: "DATABASE_URL", problem: "is required but not set") }
      return url
    } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      return nil
    }
  }

  static func config() -> AppConfig? {
    do { return try AppConfig.fromEnvironment() } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      return nil
    }
  }

  public static func serve(_ arguments: [String]) async -> Int32 {
    guard var config = config() else { return 2 }
    if arguments.contains("--no-migrate") { config.migrateOnStart = false }
    let logger = logger(config.logLevel)
    // Before any descriptor is opened: the listeners and pools count on it.
    DescriptorLimit.apply(config, logger: logger)
    let app: Application
    do { app = try Application(config: config, logger: logger) } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      return 2
    }
    // Trapped before the server can answer /readyz, so an early SIGTERM is never lost.
    let trap = SignalTrap([SIGTERM, SIGINT])
    // A signal during start-up stops it there (its statement cancelled): the migration lock
    // may be another instance's for as long as its migrations take, and an instance told to
    // stop must not begin serving first.
    let starting = Task { try await app.start() }
    let stopper = Task {
      let signal = await trap.wait()
      starting.cancel()
      return signal
    }
    do {
      _ = try await starting.value
    } catch  where trap.caught != nil {
      logger.notice(
        "signal received during start-up; stopping", ["signal": .int(Int(trap.caught ?? 0))])
      await app.shutdown()
      return 0
    } catch {
      // A database error's description is only its kind and SQLSTATE (it may reach a
      // response); what the server said is what tells the operator why start-up failed.
      var fields: [String: LogValue] = ["error": .string("\(error)")]
      if let error = error as? PostgresError { fields.merge(error.logMetadata) { $1 } }
      logger.critical("start-up failed", fields)
      await app.shutdown()
      // A configuration error found only once the database answers (a time zone it does not
      // know), or a database restored without its transaction counter, is still one: 2, which
      // the packaged unit does not restart, since starting again would change nothing.
      return error is ConfigError || error is TransactionIdsAhead ? 2 : 1
    }
    let signal = await stopper.value
    logger.notice("signal received", ["signal": .int(Int(signal))])
    await app.shutdown()
    return 0
  }

  public static func migrate() async -> Int32 {
    guard let config = config() else { return 2 }
    let logger = logger(config.logLevel)
    // The migration lock is a session advisory lock: on the primary itself when a direct URL is set.
    let pool = commandPool(url: config.sessionDatabaseURL, logger: logger)
    let status: Int32
    do {
      let applied = try await Migrator(directory: config.migrationsDirectory, logger: logger)
        .migrate(pool)
      print(
        applied.isEmpty
          ? "migrations: up to date" : "migrations applied: \(applied.joined(separator: ", "))")
      // A deploy job's migrate is the first to meet a database restored into another cluster:
      // it says so before any instance is started on it.
      try await TransactionIdCheck.verify(pool)
      status = 0
    } catch let error as TransactionIdsAhead {
      FileHandle.standardError.write(Data("refused: \(error)\n".utf8))
      status = 2
    } catch {
      FileHandle.standardError.write(Data("migration failed: \(failure(error))\n".utf8))
      status = 1
    }
    await pool.shutdown()
    return status
  }

  public static func seedDemo() async -> Int32 {
    guard let url = commandDatabaseURL() else { return 2 }
    let logger = logger(.notice)
    let pool = commandPool(url: url, logger: logger)
    do {
      let added = try await DemoCatalog.load(into: pool)
      print("demo catalog: \(added) product(s) added")
      await pool.shutdown()
      return 0
    } catch {
      FileHandle.standardError.write(Data("seed-demo failed: \(failure(error))\n".utf8))
      await pool.shutdown()
      return 1
    }
  }
}
