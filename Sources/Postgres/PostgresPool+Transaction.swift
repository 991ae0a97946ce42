extension PostgresPool {
  /// Runs `body` in a transaction on one session: `COMMIT` when it returns, `ROLLBACK` when
  /// it throws (and the session is dropped if even `ROLLBACK` fails). `BEGIN` is sent with the
  /// body's first statement, in the same round trip.
  ///
  /// If a statement failed inside `body` and `body` swallowed the error, PostgreSQL would turn
  /// `COMMIT` into a silent rollback; this throws instead, so a caller never takes a rollback
  /// for a commit.
  public func withTransaction<T: Sendable>(_ body: (PostgresTransaction) async throws -> T)
    async throws -> T
  {
    try await withTransaction(cancellable: true, body)
  }

  /// `cancellable` false: the calling task's cancellation cancels none of its statements
  /// (`PostgresShieldedPool`).
  func withTransaction<T: Sendable>(
    cancellable: Bool, _ body: (PostgresTransaction) async throws -> T
  ) async throws -> T {
    try await withConnection { connection in
      // The BEGIN travels with the body's first statement (one round trip fewer); a body that
      // sends nothing opens no transaction and has nothing to end.
      connection.deferBegin()
      let transaction = PostgresTransaction(
        connection: connection, roundTrips: roundTrips, cancellable: cancellable)
      let value: T
      do {
        value = try await body(transaction)
      } catch {
        transaction.end()
        if connection.endDeferredBegin() { await rollback(connection, cancellable: cancellable) }
        throw error
      }
      transaction.end()
      guard connection.endDeferredBegin() else { return value }
      if connection.isInFailedTransaction {
        await rollback(connection, cancellable: cancellable)
        throw PostgresError(
          kind: .server, sqlState: "25P02",
          message: "a statement in the transaction failed; it was rolled back")
      }
      roundTrips.add()
      try await connection.execute("COMMIT", cancellable: cancellable)
      return value
    }
  }

  private func rollback(_ connection: PostgresConnection, cancellable: Bool) async {
    do {
      roundTrips.add()
      try await connection.execute("ROLLBACK", cancellable: cancellable)
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
