extension PostgresPool {
  /// Runs `body` in a transaction on one session: `COMMIT` when it returns, `ROLLBACK` when
  /// it throws (and the session is dropped if even `ROLLBACK` fails).
  ///
  /// If a statement failed inside `body` and `body` swallowed the error, PostgreSQL would turn
  /// `COMMIT` into a silent rollback; this throws instead, so a caller never takes a rollback
  /// for a commit.
  public func withTransaction<T: Sendable>(_ body: (PostgresTransaction) async throws -> T)
    async throws -> T
  {
    try await withConnection { connection in
      roundTrips.add()
      try await connection.execute("BEGIN")
      let transaction = PostgresTransaction(connection: connection, roundTrips: roundTrips)
      let value: T
      do {
        value = try await body(transaction)
      } catch {
        transaction.end()
        await rollback(connection)
        throw error
      }
      transaction.end()
      if connection.isInFailedTransaction {
        await rollback(connection)
        throw PostgresError(
          kind: .server, sqlState: "25P02",
          message: "a statement in the transaction failed; it was rolled back")
      }
      roundTrips.add()
      try await connection.execute("COMMIT")
      return value
    }
  }

  private func rollback(_ connection: PostgresConnection) async {
    do {
      roundTrips.add()
      try await connection.execute("ROLLBACK")
    } catch {
      // The session's state is unknown now; `isReusable` sees it is not idle, and poisoning
      // makes sure the pool drops it.
      connection.poison()
      if let error = error as? PostgresError {
        logger.warning("ROLLBACK failed; dropping the session", error.logMetadata)
      }
    }
  }
}
