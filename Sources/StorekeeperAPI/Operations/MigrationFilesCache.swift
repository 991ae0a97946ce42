import Postgres
import Synchronization

/// The migration files `/readyz` compares with the database, read on the first probe and kept:
/// they are what this release ships (read at start-up, as CONFIGURATION.md says), and reading
/// and hashing every file on every probe let an unauthenticated caller make the instance
/// work the disk. A failed read is not kept, so the next probe tries again.
final class MigrationFilesCache: Sendable {
  private let migrator: Migrator
  private let files = Mutex<Migrator.Files?>(nil)

  init(_ migrator: Migrator) {
    self.migrator = migrator
  }

  func pending(_ database: PostgresPool) async throws -> [String] {
    let loaded: Migrator.Files
    if let kept = files.withLock({ $0 }) {
      loaded = kept
    } else {
      loaded = try migrator.load()
      files.withLock { $0 = loaded }
    }
    return try await migrator.pending(database, files: loaded)
  }
}
