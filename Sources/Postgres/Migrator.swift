import StorekeeperLogging

/// Applies `Migrations/NNNN_name.sql` files in order, then the `Migrations/repeatable/*.sql`
/// definitions whose bytes changed (see `RepeatableFile`).
///
/// Each file runs in its own transaction (so a file must not contain BEGIN/COMMIT, nor
/// statements that refuse a transaction such as `CREATE INDEX CONCURRENTLY`) and is recorded
/// in `schema_migrations` with the SHA-256 of its bytes. The whole run holds a session-level
/// advisory lock, so instances starting together apply each file once; the later ones wait,
/// then find nothing to do. An applied file whose bytes changed stops the run. A repeatable file
/// is applied when its bytes differ from the ones last applied, unless the database was
/// migrated by a newer release (one with a later versioned migration than any here): during a
/// rolling upgrade an old instance that restarts must not put back its older functions.
/// Because of that
/// lock, the pool given must reach PostgreSQL itself or a session pooler, never a transaction
/// pooler (Storekeeper passes its `DATABASE_DIRECT_URL` pool).
public struct Migrator: Sendable {
  public let directory: String
  let logger: Logger

  /// Key of the advisory lock held during a run ("storekee" in ASCII).
  static let lockKey: Int64 = 0x7374_6f72_656b_6565

  public init(directory: String, logger: Logger) {
    self.directory = directory
    self.logger = logger
  }

  /// Applies what is pending and returns the file names applied by this call.
  @discardableResult
  public func migrate(_ pool: PostgresPool) async throws -> [String] {
    let files = try MigrationFile.load(directory: directory)
    let repeatables = try RepeatableFile.load(migrationsDirectory: directory)
    return try await pool.withConnection { connection in
      try await lock(connection)
      do {
        var applied = try await applyPending(files, on: connection)
        applied += try await applyRepeatables(repeatables, release: files, on: connection)
        try await connection.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
        return applied
      } catch {
        // The lock ends with the session anyway if this fails.
        _ = try? await connection.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
        throw error
      }
    }
  }

  /// The migration files as read from `directory` once: what this release ships.
  public struct Files: Sendable {
    let versioned: [MigrationFile]
    let repeatable: [RepeatableFile]
  }

  /// Reads every migration file (a readiness probe reads them once, not on every probe).
  public func load() throws -> Files {
    Files(
      versioned: try MigrationFile.load(directory: directory),
      repeatable: try RepeatableFile.load(migrationsDirectory: directory))
  }

  /// File names not yet applied (repeatable ones as `repeatable/name.sql`); throws
  /// `checksumMismatch` for an edited applied file.
  public func pending(_ pool: PostgresPool) async throws -> [String] {
    try await pending(pool, files: try load())
  }

  /// `pending(_:)` against files read before.
  public func pending(_ pool: PostgresPool, files loaded: Files) async throws -> [String] {
    let files = loaded.versioned
    let repeatables = loaded.repeatable
    let present = try await pool.query(
      """
      SELECT to_regclass('schema_migrations') IS NOT NULL AS present,
             to_regclass('schema_repeatables') IS NOT NULL AS repeatables
      """)
    guard try present.first?.decode("present", as: Bool.self) == true else {
      return files.map(\.name) + repeatables.map { Self.label($0) }
    }
    let applied = try await pool.query("SELECT version, name, checksum FROM schema_migrations")
    let versioned = try Self.unapplied(files, applied: applied).map(\.name)
    let recorded =
      try present.first?.decode("repeatables", as: Bool.self) == true
      ? try await pool.query("SELECT name, checksum, release FROM schema_repeatables") : []
    let due = try Self.due(
      repeatables, recorded: recorded, release: Self.release(files),
      database: Self.release(applied))
    return versioned + due.map { Self.label($0) }
  }

  private func lock(_ connection: PostgresConnection) async throws {
    try await connection.execute("SELECT pg_advisory_lock(\(Self.lockKey))")
  }

  private func applyPending(_ files: [MigrationFile], on connection: PostgresConnection)
    async throws -> [String]
  {
    try await connection.executeScript(
      """
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )
      """)
    let applied = try await connection.query(
      "SELECT version, name, checksum FROM schema_migrations")
    var names: [String] = []
    for file in try Self.unapplied(files, applied: applied) {
      try await apply(file, on: connection)
      names.append(file.name)
    }
    return names
  }

  private func apply(_ file: MigrationFile, on connection: PostgresConnection) async throws {
    try await apply(
      name: file.name, sql: file.sql,
      record: """
        INSERT INTO schema_migrations (version, name, checksum)
        VALUES (\(file.version), \(file.name), \(file.checksum))
        """, on: connection)
  }

  /// Runs `sql` and its `record` in one transaction.
  private func apply(
    name: String, sql: String, record: PostgresQuery, on connection: PostgresConnection
  ) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    do {
      try await connection.execute("BEGIN")
      try await connection.executeScript(sql)
      try await connection.execute(record)
      try await connection.execute("COMMIT")
    } catch let error as PostgresError {
      _ = try? await connection.execute("ROLLBACK")
      logger.error(
        "migration failed", error.logMetadata.merging(["file": .string(name)]) { a, _ in a })
      throw MigrationError.failed(file: name, underlying: error)
    }
    let elapsed = clock.now - start
    logger.info(
      "migration applied",
      [
        "file": .string(name),
        "ms": .int(
          Int(
            elapsed.components.seconds * 1000
              + elapsed.components.attoseconds / 1_000_000_000_000_000)),
      ])
  }

  private func applyRepeatables(
    _ repeatables: [RepeatableFile], release files: [MigrationFile],
    on connection: PostgresConnection
  ) async throws -> [String] {
    guard !repeatables.isEmpty else { return [] }
    try await connection.executeScript(
      """
      CREATE TABLE IF NOT EXISTS schema_repeatables (
        name text PRIMARY KEY,
        checksum text NOT NULL,
        -- The latest versioned migration of the release that applied it.
        release integer NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )
      """)
    let release = Self.release(files)
    let database = try Self.release(
      try await connection.query("SELECT version FROM schema_migrations"))
    let recorded = try await connection.query(
      "SELECT name, checksum, release FROM schema_repeatables")
    let due = try Self.due(repeatables, recorded: recorded, release: release, database: database)
    if release < database {
      logger.warning(
        "repeatable definitions left as the newer release that migrated the database made them",
        ["release": .int(release), "database": .int(database)])
    }
    var names: [String] = []
    for file in due {
      try await apply(
        name: Self.label(file), sql: file.sql,
        record: """
          INSERT INTO schema_repeatables (name, checksum, release)
          VALUES (\(file.name), \(file.checksum), \(release))
          ON CONFLICT (name) DO UPDATE
            SET checksum = EXCLUDED.checksum, release = EXCLUDED.release, applied_at = now()
          """, on: connection)
      names.append(Self.label(file))
    }
    return names
  }

  /// How a repeatable file is named in logs and in the lists returned.
  static func label(_ file: RepeatableFile) -> String {
    RepeatableFile.subdirectory + "/" + file.name
  }

  /// The latest version among `files` (0 for none).
  static func release(_ files: [MigrationFile]) -> Int {
    files.map(\.version).max() ?? 0
  }

  /// The latest version recorded in `schema_migrations` rows (0 for none).
  static func release(_ rows: [PostgresRow]) throws -> Int {
    try rows.map { try $0.decode("version", as: Int.self) }.max() ?? 0
  }

  /// The repeatable files to apply: those whose bytes differ from the ones recorded, when this
  /// release (`release`, its latest versioned migration) is not older than the database's
  /// (`database`) nor than the release that applied the recorded ones.
  static func due(
    _ files: [RepeatableFile], recorded rows: [PostgresRow], release: Int, database: Int
  ) throws -> [RepeatableFile] {
    guard release >= database else { return [] }
    var recorded: [String: (checksum: String, release: Int)] = [:]
    for row in rows {
      recorded[try row.decode("name")] = (try row.decode("checksum"), try row.decode("release"))
    }
    return files.filter { file in
      guard let record = recorded[file.name] else { return true }
      return record.checksum != file.checksum && release >= record.release
    }
  }

  /// Files with no row in `schema_migrations`, after checking the applied ones are unchanged.
  static func unapplied(_ files: [MigrationFile], applied rows: [PostgresRow]) throws
    -> [MigrationFile]
  {
    var recorded: [Int: (name: String, checksum: String)] = [:]
    for row in rows {
      recorded[try row.decode("version", as: Int.self)] = (
        try row.decode("name"), try row.decode("checksum")
      )
    }
    var pending: [MigrationFile] = []
    for file in files {
      if let record = recorded[file.version] {
        guard record.checksum == file.checksum, record.name == file.name else {
          throw MigrationError.checksumMismatch(file: file.name)
        }
      } else {
        pending.append(file)
      }
    }
    return pending
  }
}
