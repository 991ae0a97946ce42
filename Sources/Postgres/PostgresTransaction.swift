import Synchronization

/// The session of one `withTransaction` block; every statement runs inside that transaction.
/// Using it after the block has ended throws `.closed`.
public final class PostgresTransaction: PostgresExecutor, Sendable {
  let connection: PostgresConnection
  private let roundTrips: PostgresRoundTrips
  private let active = Mutex(true)

  init(connection: PostgresConnection, roundTrips: PostgresRoundTrips) {
    self.connection = connection
    self.roundTrips = roundTrips
  }

  @discardableResult
  public func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
    try checkActive()
    roundTrips.add()
    return try await connection.query(query)
  }

  @discardableResult
  public func execute(_ query: PostgresQuery) async throws -> Int {
    try checkActive()
    roundTrips.add()
    return try await connection.execute(query)
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
