import CPostgres
import Dispatch
import StorekeeperLogging
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// One libpq session. Owns the `PGconn` (freed in `deinit`).
///
/// libpq's calls block, so every call runs on this connection's own serial queue: never on
/// Swift's cooperative pool and never on an HTTP event-loop thread. The serial queue is also
/// what makes the unchecked `Sendable` true: the `PGconn` is only touched by one thread at a
/// time. The exceptions are `cancelRunningQuery` (libpq's `PGcancel` is made for use from
/// another thread) and the idle-time checks the pool makes while it holds the connection
/// exclusively.
final class PostgresConnection: @unchecked Sendable {
  private let handle: OpaquePointer
  private let cancelHandle: OpaquePointer?
  private let queue: DispatchQueue
  /// Kept alive as long as the `PGconn` that calls it.
  private let noticeSink: PostgresNoticeSink
  /// Set when a query was cancelled from outside: the session may still be busy, so the
  /// pool must not hand it out again.
  private let poisoned = Mutex(false)
  /// Only touched on `queue`, like the `PGconn`.
  private var statements: PostgresStatementCache
  /// A transaction was opened here and its `BEGIN` not yet sent: the first statement that
  /// runs on `queue` sends it in the same round trip (`afterBegin`). Set and cleared
  /// by the pool's `withTransaction` before and after its body, taken on `queue`.
  private let beginPending = Mutex(false)

  private init(
    handle: OpaquePointer, queue: DispatchQueue, statementCacheCapacity: Int, logger: Logger
  ) {
    self.handle = handle
    self.statements = PostgresStatementCache(capacity: statementCacheCapacity)
    self.cancelHandle = PQgetCancel(handle)
    self.queue = queue
    self.noticeSink = PostgresNoticeSink(logger: logger)
    noticeSink.install(on: handle)
  }

  deinit {
    if let cancelHandle { PQfreeCancel(cancelHandle) }
    PQfinish(handle)
  }

  /// Opens a session, blocking the calling thread for at most the connect timeout. With a
  /// `statementCacheCapacity` above 0, parameterized statements are prepared once per session
  /// and run by name afterwards (see `PostgresStatementCache`).
  static func connectBlocking(
    _ parameters: PostgresConnectionParameters, statementCacheCapacity: Int = 0, logger: Logger,
    queue: DispatchQueue = DispatchQueue(label: "storekeeper.postgres.connection")
  ) throws -> PostgresConnection {
    let raw = parameters.withCArrays { keys, values in PQconnectdbParams(keys, values, 1) }
    guard let raw else {
      throw PostgresError(kind: .connection, message: "out of memory opening a connection")
    }
    guard PQstatus(raw) == CONNECTION_OK else {
      let message = String(cString: PQerrorMessage(raw)).trimmingTrailingNewlines
      PQfinish(raw)
      // libpq quotes the host and port it tried, which hold part of a password that has an
      // `@` or `/` not percent-encoded (the configuration refuses such a URL; a caller that
      // did not check still logs no password).
      throw PostgresError(kind: .connection, message: parameters.masking(message))
    }
    return PostgresConnection(
      handle: raw, queue: queue, statementCacheCapacity: statementCacheCapacity, logger: logger)
  }

  /// Opens a session on a fresh serial queue and suspends (no thread held) until it is up.
  static func connect(
    _ parameters: PostgresConnectionParameters, statementCacheCapacity: Int, logger: Logger
  ) async throws -> PostgresConnection {
    let queue = DispatchQueue(label: "storekeeper.postgres.connection")
    return try await withCheckedThrowingContinuation { continuation in
      queue.async {
        continuation.resume(
          with: Result {
            try connectBlocking(
              parameters, statementCacheCapacity: statementCacheCapacity, logger: logger,
              queue: queue)
          })
      }
    }
  }

  // MARK: async, on the connection's queue

  /// With `cancellable` false the statement runs to its end even if the calling task is
  /// cancelled (see `PostgresShieldedPool`).
  @discardableResult
  func query(_ query: PostgresQuery, cancellable: Bool = true) async throws -> [PostgresRow] {
    try await onQueue(cancellable: cancellable) { connection in
      try connection.executeBlocking(query).rows()
    }
  }

  @discardableResult
  func execute(_ query: PostgresQuery, cancellable: Bool = true) async throws -> Int {
    try await onQueue(cancellable: cancellable) { connection in
      try connection.executeBlocking(query).affectedRows
    }
  }

  /// Runs SQL that may hold several statements and no parameters (migration files).
  func executeScript(_ sql: String) async throws {
    try await onQueue { connection in try connection.executeScriptBlocking(sql) }
  }

  /// Runs `body` on the session's queue. Cancelling the calling task cancels the statement on
  /// the server (and poisons the session, like a timeout does).
  private func onQueue<T: Sendable>(
    cancellable: Bool = true, _ body: @escaping @Sendable (PostgresConnection) throws -> T
  ) async throws -> T {
    guard cancellable else {
      return try await withCheckedThrowingContinuation { continuation in
        queue.async { continuation.resume(with: Result { try body(self) }) }
      }
    }
    let finished = Mutex(false)
    return try await withTaskCancellationHandler {
      defer { finished.withLock { $0 = true } }
      return try await withCheckedThrowingContinuation { continuation in
        queue.async { continuation.resume(with: Result { try body(self) }) }
      }
    } onCancel: {
      // Under the lock, as with timeouts: once finished, no cancel is sent.
      finished.withLock { done in
        if !done { cancelRunningQuery() }
      }
    }
  }

  // MARK: transactions whose BEGIN goes with their first statement

  /// Opens a transaction without a round trip of its own: the next statement sent here
  /// carries the `BEGIN`.
  func deferBegin() {
    beginPending.withLock { $0 = true }
  }

  /// Ends the deferral; true when the `BEGIN` was sent (a statement ran), so the transaction
  /// must be committed or rolled back, false when nothing ran and there is nothing to end.
  func endDeferredBegin() -> Bool {
    beginPending.withLock { pending in
      defer { pending = false }
      return !pending
    }
  }

  private func takePendingBegin() -> Bool {
    beginPending.withLock { pending in
      defer { pending = false }
      return pending
    }
  }

  // MARK: blocking, on the caller's thread

  func executeBlocking(_ query: PostgresQuery) throws -> PostgresResult {
    let beginning = takePendingBegin()
    for case let bind? in query.binds where PostgresText.containsNUL(bind) {
      // Nothing is sent: the next statement, if any, still carries the BEGIN.
      if beginning { deferBegin() }
      // Text-format parameters end at NUL, and PostgreSQL text cannot hold one anyway:
      // refuse rather than send a silently truncated value.
      throw PostgresError(
        kind: .server, sqlState: PostgresError.characterNotInRepertoire,
        message: "a parameter contains a NUL character")
    }
    let copies: [UnsafeMutablePointer<CChar>?] = query.binds.map { $0.map { strdup($0) } }
    defer { copies.forEach { free($0) } }
    let values = copies.map { $0.map { UnsafePointer($0) } }
    guard statements.isEnabled else {
      let count = Int32(values.count)
      guard beginning else {
        return try check(PQexecParams(handle, query.sql, count, nil, values, nil, nil, 0))
      }
      return try afterBegin { PQsendQueryParams($0, query.sql, count, nil, values, nil, nil, 0) }
    }
    do {
      return try executePrepared(query.sql, values, beginning: beginning)
    } catch let error as PostgresError where error.invalidatesPreparedStatement {
      // A migration changed a table the statement returns, or the statement is gone: prepare
      // it afresh. Outside a transaction the failed attempt did nothing, so it can run again.
      if let name = statements.forget(query.sql),
        error.sqlState != PostgresError.invalidStatementName
      {
        deallocate(name)
      }
      guard PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
      // Still idle: the BEGIN, if this statement was to carry it, was not sent either.
      return try executePrepared(query.sql, values, beginning: takePendingBegin())
    }
  }

  private func executePrepared(
    _ sql: String, _ values: [UnsafePointer<CChar>?], beginning: Bool = false
  ) throws -> PostgresResult {
    let lookup = statements.lookup(sql)
    if let evicted = lookup.evicted { deallocate(evicted) }
    if !lookup.isPrepared {
      // Once per session and statement; outside the transaction when it is about to begin.
      do {
        _ = try check(PQprepare(handle, lookup.name, sql, Int32(values.count), nil))
      } catch {
        // Refused before the BEGIN was sent: nothing ran, and the next statement still
        // carries it (else what follows would autocommit).
        if beginning { deferBegin() }
        throw error
      }
      statements.didPrepare(sql, as: lookup.name)
    }
    let count = Int32(values.count)
    guard beginning else {
      return try check(PQexecPrepared(handle, lookup.name, count, values, nil, nil, 0))
    }
    return try afterBegin { PQsendQueryPrepared($0, lookup.name, count, values, nil, nil, 0) }
  }

  /// `BEGIN` and the statement `send` queues, in one round trip (libpq's pipeline mode). The
  /// server runs them in order and stops at the first error: a failed `BEGIN` leaves the
  /// statement unrun (and is the error thrown); a failed statement leaves the transaction
  /// failed, as it would have been after a separate `BEGIN`.
  private func afterBegin(_ send: (OpaquePointer) -> Int32) throws -> PostgresResult {
    guard PQenterPipelineMode(handle) == 1 else { throw connectionError() }
    defer {
      // Only fails with results left unread, which `pipelineSync` has read to the end.
      if PQexitPipelineMode(handle) != 1 { poison() }
    }
    guard PQsendQueryParams(handle, "BEGIN", 0, nil, nil, nil, nil, 0) == 1, send(handle) == 1,
      PQpipelineSync(handle) == 1
    else {
      poison()
      throw connectionError()
    }
    let begin = lastResult()
    let statement = lastResult()
    try pipelineSync()
    _ = try check(begin)
    return try check(statement)
  }

  /// One pipelined statement's result: libpq ends each with a null; the last result before
  /// it is the one `PQexec` would return.
  private func lastResult() -> PostgresResult? {
    var last: PostgresResult?
    while let raw = PQgetResult(handle) {
      last = PostgresResult(raw)
      if PQresultStatus(raw) == PGRES_PIPELINE_SYNC { break }
    }
    return last
  }

  /// Reads up to the pipeline's sync point. Anything else there means the session lost track
  /// of its results (a broken connection): it is dropped.
  private func pipelineSync() throws {
    guard let raw = PQgetResult(handle) else {
      poison()
      throw connectionError()
    }
    defer { PQclear(raw) }
    guard PQresultStatus(raw) == PGRES_PIPELINE_SYNC else {
      poison()
      throw connectionError()
    }
  }

  /// Best effort: in a failed transaction DEALLOCATE would only fail, and a statement left on
  /// the server costs nothing but memory until the session ends.
  private func deallocate(_ name: String) {
    guard PQtransactionStatus(handle) != PQTRANS_INERROR else { return }
    if let raw = PQexec(handle, "DEALLOCATE " + name) { PQclear(raw) }
  }

  func executeScriptBlocking(_ sql: String) throws {
    if takePendingBegin() { _ = try check(PQexec(handle, "BEGIN")) }
    _ = try check(PQexec(handle, sql))
  }

  private func check(_ raw: OpaquePointer?) throws -> PostgresResult {
    try check(raw.map(PostgresResult.init))
  }

  private func check(_ result: PostgresResult?) throws -> PostgresResult {
    guard let result else { throw connectionError() }
    if result.isSuccess { return result }
    if let error = result.serverError() { throw error }
    throw connectionError()
  }

  private func connectionError() -> PostgresError {
    let message = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines
    return PostgresError(
      kind: .connection, message: message.isEmpty ? "connection to the server lost" : message)
  }

  // MARK: state

  /// Whether the pool may hand this session out again: connected, not inside a transaction,
  /// not cancelled mid-query.
  var isReusable: Bool {
    PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
      && !poisoned.withLock { $0 }
  }

  /// Checks an idle session before reuse without a round trip. An idle session has nothing to
  /// read, so readable input almost always means the server said goodbye (a restart, an idle
  /// timeout, a terminated backend: a FATAL message, then the socket closes, possibly in two
  /// steps). Rarely it is something harmless (a NOTICE); dropping the session then only costs
  /// a reconnect, while keeping a dying one would fail the caller's statement.
  func isUsableAfterIdle() -> Bool {
    guard isReusable else { return false }
    var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
    return poll(&descriptor, 1, 0) == 0
  }

  var isInFailedTransaction: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

  /// Marks the session so the pool drops it instead of lending it again.
  func poison() {
    poisoned.withLock { $0 = true }
  }

  /// Asks the server to cancel whatever this session runs, and marks the session unusable (at
  /// once: the pool drops it instead of lending it again, so a cancel arriving late hits no
  /// other borrower's statement). It may land on the same borrower's next statement (a
  /// cancelled handler's COMMIT, say), which then fails as any cancelled statement does.
  func cancelRunningQuery() {
    poisoned.withLock { $0 = true }
    guard cancelHandle != nil else { return }
    // PQcancel opens a connection to the server and waits for its answer, blocking, without
    // `connect_timeout`. A task's cancellation runs on the thread that cancels it, an HTTP
    // event loop when a client goes away, so the cancel is sent from elsewhere; `self`, and
    // with it the cancel handle, is kept until it is.
    DispatchQueue.global().async { [self] in
      guard let cancelHandle else { return }
      var buffer = [CChar](repeating: 0, count: 256)
      _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
    }
  }

  // MARK: LISTEN support (used by PostgresListener on its own thread)

  var socket: Int32 { PQsocket(handle) }

  /// Reads what the server sent; false when the connection is gone.
  func consumeInput() -> Bool {
    PQconsumeInput(handle) != 0 && PQstatus(handle) == CONNECTION_OK
  }

  func takeNotifications() -> [(channel: String, payload: String)] {
    var notifications: [(channel: String, payload: String)] = []
    while let notify = PQnotifies(handle) {
      let channel = String(cString: notify.pointee.relname)
      let payload = notify.pointee.extra.map { String(cString: $0) } ?? ""
      PQfreemem(notify)
      notifications.append((channel, payload))
    }
    return notifications
  }

  /// `LISTEN` takes an identifier, not a parameter, so the name is quoted by libpq.
  func listenBlocking(_ channel: String) throws {
    guard let quoted = PQescapeIdentifier(handle, channel, channel.utf8.count) else {
      throw connectionError()
    }
    defer { PQfreemem(quoted) }
    try executeScriptBlocking("LISTEN " + String(cString: quoted))
  }
}
