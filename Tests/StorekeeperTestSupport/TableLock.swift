import Postgres

/// A table another session holds locked until `release()`: how a busy database looks to the
/// statement under test, which waits for it (a cancelled statement stops waiting at once).
package final class TableLock: Sendable {
  private let release: AsyncStream<Void>.Continuation
  private let holder: Task<Void, any Error>

  private init(release: AsyncStream<Void>.Continuation, holder: Task<Void, any Error>) {
    self.release = release
    self.holder = holder
  }

  /// Returns once the lock is held. `mode` is a PostgreSQL lock mode (`SHARE`).
  package static func hold(_ table: String, in mode: String, on database: PostgresPool) async
    -> TableLock
  {
    let (locked, lockedSignal) = AsyncStream<Void>.makeStream()
    let (released, release) = AsyncStream<Void>.makeStream()
    let holder = Task {
      defer { lockedSignal.finish() }
      try await database.withTransaction { tx in
        try await tx.execute(PostgresQuery(unsafeSQL: "LOCK TABLE \(table) IN \(mode) MODE"))
        lockedSignal.yield()
        for await _ in released { break }
      }
    }
    for await _ in locked { break }
    return TableLock(release: release, holder: holder)
  }

  /// Ends the holding transaction; throws what it threw (a lock it never got, among others).
  package func release() async throws {
    release.finish()
    try await holder.value
  }

  deinit { release.finish() }
}
