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
      throw PostgresError(kind: .connection, message: message)
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

  // MARK: blocking, on the caller's thread

  func executeBlocking(_ query: PostgresQuery) throws -> PostgresResult {
    for case let bind? in query.binds where PostgresText.containsNUL(bind) {
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
      return try check(
        PQexecParams(handle, query.sql, Int32(values.count), nil, values, nil, nil, 0))
    }
    do {
      return try executePrepared(query.sql, values)
    } catch let error as PostgresError where Self.invalidatesStatement(error) {
      // A migration changed a table the statement returns, or the statement is gone: prepare
      // it afresh. Outside a transaction the failed attempt did nothing, so it can run again.
      if let name = statements.forget(query.sql),
        error.sqlState != PostgresError.invalidStatementName
      {
        deallocate(name)
      }
      guard PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
      return try executePrepared(query.sql, values)
    }
  }

  private func executePrepared(_ sql: String, _ values: [UnsafePointer<CChar>?]) throws
    -> PostgresResult
  {
    let lookup = statements.lookup(sql)
    if let evicted = lookup.evicted { deallocate(evicted) }
    if !lookup.isPrepared {
      _ = try check(PQprepare(handle, lookup.name, sql, Int32(values.count), nil))
      statements.didPrepare(sql, as: lookup.name)
    }
    return try check(
      PQexecPrepared(handle, lookup.name, Int32(values.count), values, nil, nil, 0))
  }

  private static func invalidatesStatement(_ error: PostgresError) -> Bool {
    error.kind == .server
      && (error.sqlState == PostgresError.invalidStatementName
        || (error.sqlState == PostgresError.featureNotSupported
          && error.message.contains("cached plan")))
  }

  /// Best effort: in a failed transaction DEALLOCATE would only fail, and a statement left on
  /// the server costs nothing but memory until the session ends.
  private func deallocate(_ name: String) {
    guard PQtransactionStatus(handle) != PQTRANS_INERROR else { return }
    if let raw = PQexec(handle, "DEALLOCATE " + name) { PQclear(raw) }
  }

  func executeScriptBlocking(_ sql: String) throws {
    _ = try check(PQexec(handle, sql))
  }

  private func check(_ raw: OpaquePointer?) throws -> PostgresResult {
    guard let raw else { throw connectionError() }
    let result = PostgresResult(raw)
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

  /// Asks the server to cancel whatever this session runs, and marks the session unusable.
  func cancelRunningQuery() {
    poisoned.withLock { $0 = true }
    guard let cancelHandle else { return }
    var buffer = [CChar](repeating: 0, count: 256)
    _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
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
