/// The pool, with statements that the calling task's cancellation does not cancel: for work
/// done on behalf of other requests too (a group commit's flush, which runs in its leader's
/// task so that no thread hop comes between the request and the database), where one
/// departing client must not cut its neighbours' statement short.
public struct PostgresShieldedPool: PostgresExecutor {
  public let pool: PostgresPool

  @discardableResult
  public func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
    pool.roundTrips.add()
    return try await pool.withConnection { try await $0.query(query, cancellable: false) }
  }

  @discardableResult
  public func execute(_ query: PostgresQuery) async throws -> Int {
    pool.roundTrips.add()
    return try await pool.withConnection { try await $0.execute(query, cancellable: false) }
  }

  /// `PostgresPool.withTransaction`, none of whose statements the caller's cancellation
  /// cancels.
  public func withTransaction<T: Sendable>(_ body: (PostgresTransaction) async throws -> T)
    async throws -> T
  {
    try await pool.withTransaction(cancellable: false, body)
  }
}

extension PostgresPool {
  /// This pool, its statements shielded from the calling task's cancellation.
  public var shielded: PostgresShieldedPool { PostgresShieldedPool(pool: self) }
}
