/// Something that runs parameterized statements: the pool (each call on any free session) or
/// a transaction (every call on its one session).
public protocol PostgresExecutor: Sendable {
  /// Runs a statement and returns its rows.
  @discardableResult func query(_ query: PostgresQuery) async throws -> [PostgresRow]
  /// Runs a statement and returns the number of rows it affected.
  @discardableResult func execute(_ query: PostgresQuery) async throws -> Int
}

extension PostgresExecutor {
  /// The first row, or nil.
  public func queryFirst(_ query: PostgresQuery) async throws -> PostgresRow? {
    try await self.query(query).first
  }

  /// Sends a notification; inside a transaction it is delivered at commit, and not at all
  /// after a rollback.
  public func notify(channel: String, payload: String = "") async throws {
    try await execute("SELECT pg_notify(\(channel), \(payload))")
  }
}
