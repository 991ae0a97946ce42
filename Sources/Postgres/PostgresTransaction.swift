import Synchronization

/// The session of one `withTransaction` block; every statement runs inside that transaction.
/// Using it after the block has ended throws `.closed`.
public final class PostgresTransaction: PostgresExecutor, Sendable {
  let connection: PostgresConnection
  private let roundTrips: PostgresRoundTrips
  /// False in a `PostgresShieldedPool`'s transaction: the calling task's cancellation does not
  /// cancel its statements.
  private let cancellable: Bool
  private let active = Mutex(true)

  init(connection: PostgresConnection, roundTrips: PostgresRoundTrips, cancellable: Bool = true) {
    self.connection = connection
    self.roundTrips = roundTrips
    self.cancellable = cancellable
  }

  @discardableResult
  public func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
    try checkActive()
    roundTrips.add()
    return try await connection.query(query, cancellable: cancellable)
  }

  @discardableResult
  public func execute(_ query: PostgresQuery) async throws -> Int {
    try checkActive()
    roundTrips.add()
    return try await connection.execute(query, cancellable: cancellable)
  }

  func end() {
    active.withLock { $0 = false }
  }

  private func checkActive() throws {
    guard active.withLock({ $0 }) else {
      throw PostgresError(kind: .closed, message: "the transaction has already ended")
    }
  }
}
