import StorekeeperLogging

/// Applies `Migrations/NNNN_name.sql` files in order.
///
/// Each file runs in its own transaction (so a file must not contain BEGIN/COMMIT, nor
/// statements that refuse a transaction such as `CREATE INDEX CONCURRENTLY`) and is recorded
/// in `schema_migrations` with the SHA-256 of its bytes. The whole run holds a session-level
/// advisory lock, so instances starting together apply each file once; the later ones wait,
/// then find nothing to do. An applied file whose bytes changed stops the run. Because of that
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
    return try await pool.withConnection { connection in
      try await lock(connection)
      do {
        let applied = try await applyPending(files, on: connection)
        try await connection.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
        return applied
      } catch {
        // The lock ends with the session anyway if this fails.
        _ = try? await connection.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
        throw error
      }
    }
  }

  /// File names not yet applied; throws `checksumMismatch` for an edited applied file.
  public func pending(_ pool: PostgresPool) async throws -> [String] {
    let files = try MigrationFile.load(directory: directory)
    let present = try await pool.query(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
    guard try present.first?.decode("present", as: Bool.self) == true else {
      return files.map(\.name)
    }
    let applied = try await pool.query("SELECT version, name, checksum FROM schema_migrations")
    return try Self.unapplied(files, applied: applied).map(\.name)
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
    let clock = ContinuousClock()
    let start = clock.now
    do {
      try await connection.execute("BEGIN")
      try await connection.executeScript(file.sql)
      try await connection.execute(
        """
        INSERT INTO schema_migrations (version, name, checksum)
        VALUES (\(file.version), \(file.name), \(file.checksum))
        """)
      try await connection.execute("COMMIT")
    } catch let error as PostgresError {
      _ = try? await connection.execute("ROLLBACK")
      logger.error(
        "migration failed", error.logMetadata.merging(["file": .string(file.name)]) { a, _ in a })
      throw MigrationError.failed(file: file.name, underlying: error)
    }
    let elapsed = clock.now - start
    logger.info(
      "migration applied",
      [
        "file": .string(file.name),
        "ms": .int(
          Int(
            elapsed.components.seconds * 1000
              + elapsed.components.attoseconds / 1_000_000_000_000_000)),
      ])
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
