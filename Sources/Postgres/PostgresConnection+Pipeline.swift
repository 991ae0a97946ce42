import CPostgres

/// One statement in its own (implicit) transaction, sent in libpq's pipeline mode so that
/// the caller learns when the statement has run, before its commit is known to be durable.
///
/// The statement is sent with a Flush request before the Sync that commits it: the server
/// sends the statement's rows at once, then commits (waiting for the WAL flush) and only
/// then says it is ready. `executed` is called in between. Nothing is sent that an ordinary
/// call would not send but the Flush, so PostgreSQL does no more work; what the caller gains
/// is the time of the commit's flush, in which it may start other work (a group commit's
/// next batch, on another session). The rows are returned only once the commit is done.
extension PostgresConnection {
  /// Runs `query` to its end whatever happens to the calling task (as `cancellable: false`),
  /// calling `executed` once: as soon as the statement's rows are in, or when the call ends
  /// if it ends before that.
  func query(_ query: PostgresQuery, whenExecuted executed: @escaping @Sendable () -> Void)
    async throws -> [PostgresRow]
  {
    try await onQueue(cancellable: false) { connection in
      try connection.executeBlocking(query, whenExecuted: executed).rows()
    }
  }

  func executeBlocking(_ query: PostgresQuery, whenExecuted executed: () -> Void) throws
    -> PostgresResult
  {
    var reported = false
    defer { if !reported { executed() } }
    // Only a prepared statement is sent this way: without the cache (a transaction pooler
    // that keeps none) the statement goes the ordinary way and reports when it returns.
    guard statements.isEnabled, PQpipelineStatus(handle) == PQ_PIPELINE_OFF else {
      return try executeBlocking(query)
    }
    do {
      return try withBinds(query) { values in
        let lookup = statements.lookup(query.sql)
        if let evicted = lookup.evicted { deallocate(evicted) }
        if !lookup.isPrepared {
          _ = try check(PQprepare(handle, lookup.name, query.sql, Int32(values.count), nil))
          statements.didPrepare(query.sql, as: lookup.name)
        }
        return try pipelined(lookup.name, values) {
          reported = true
          executed()
        }
      }
    } catch let error as PostgresError where Self.invalidatesStatement(error) {
      // As in `executeBlocking`: a migration changed what the statement returns, or it is
      // gone. The failed attempt was rolled back at its Sync, so it can run again.
      if let name = statements.forget(query.sql),
        error.sqlState != PostgresError.invalidStatementName
      {
        deallocate(name)
      }
      guard PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
      return try executeBlocking(query)
    }
  }

  /// Sends Bind/Execute, Flush, Sync in one write and reads the statement's result, then the
  /// Sync's. Anything else than that sequence leaves the session in a state this code does not
  /// know, so it is poisoned (the pool drops it) and the outcome reported unknown.
  private func pipelined(
    _ name: String, _ values: [UnsafePointer<CChar>?], executed: () -> Void
  ) throws -> PostgresResult {
    guard PQenterPipelineMode(handle) == 1 else { throw connectionError() }
    guard PQsendQueryPrepared(handle, name, Int32(values.count), values, nil, nil, 0) == 1,
      PQsendFlushRequest(handle) == 1, PQpipelineSync(handle) == 1
    else { throw broken() }
    // The statement's result, then the NULL that ends it.
    guard let raw = PQgetResult(handle) else { throw broken() }
    let statement = PostgresResult(raw)
    if let extra = PQgetResult(handle) {
      PQclear(extra)
      throw broken()
    }
    executed()
    // The Sync's answer comes after the commit: an error first if the commit failed. Bounded,
    // so a session in a state nobody foresaw cannot hold the queue in a loop.
    var commitError: PostgresError?
    var synced = false
    for _ in 0..<4 {
      guard let raw = PQgetResult(handle) else {
        // Only between an error and the Sync's result; a lost session gives an error first.
        guard PQstatus(handle) == CONNECTION_OK, commitError != nil else { throw broken() }
        continue
      }
      let result = PostgresResult(raw)
      if result.status == PGRES_PIPELINE_SYNC {
        synced = true
        break
      }
      guard let error = result.serverError(), commitError == nil else { throw broken() }
      commitError = error
    }
    guard synced, PQexitPipelineMode(handle) == 1 else { throw broken() }
    if let commitError { throw commitError }
    if statement.isSuccess { return statement }
    throw statement.serverError() ?? connectionError()
  }

  /// The session's error, the session poisoned: its commit's outcome is unknown.
  private func broken() -> PostgresError {
    poison()
    return connectionError()
  }
}
