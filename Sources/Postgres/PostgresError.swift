import StorekeeperLogging

/// An error from the database layer that keeps what PostgreSQL said.
///
/// `description` stays generic on purpose (it may end up in a response or a crash report);
/// the server's fields are kept in properties and in `logMetadata` for the log.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
  public enum Kind: Sendable {
    /// The server could not be reached or the connection broke.
    case connection
    /// The server rejected the statement (see `sqlState`).
    case server
    /// A value in a row could not be turned into the requested Swift type.
    case decoding
    /// No connection became free within the pool's acquire timeout.
    case poolTimeout
    /// The pool was shut down, or a transaction was used after it ended.
    case closed
  }

  /// Why a row value could not be decoded; lets callers tell NULL from a bad value.
  public enum DecodingProblem: Sendable, Equatable {
    case unexpectedNull
    case badValue(type: String)
    case noSuchColumn
  }

  public var kind: Kind
  public var sqlState: String?
  public var message: String
  public var detail: String?
  public var constraint: String?
  public var table: String?
  public var column: String?
  public var hint: String?
  public var decodingProblem: DecodingProblem?

  public static let uniqueViolation = "23505"
  public static let foreignKeyViolation = "23503"
  public static let checkViolation = "23514"
  public static let notNullViolation = "23502"
  public static let serializationFailure = "40001"
  public static let deadlockDetected = "40P01"
  public static let lockNotAvailable = "55P03"
  public static let queryCanceled = "57014"
  public static let adminShutdown = "57P01"
  public static let crashShutdown = "57P02"
  public static let cannotConnectNow = "57P03"
  public static let characterNotInRepertoire = "22021"
  public static let readOnlySQLTransaction = "25006"
  public static let idleInTransactionSessionTimeout = "25P03"
  public static let insufficientResources = "53000"
  public static let diskFull = "53100"
  public static let outOfMemory = "53200"
  public static let tooManyConnections = "53300"
  public static let systemError = "58000"
  public static let ioError = "58030"
  /// Also what a prepared statement raises when a table it returns changed shape
  /// ("cached plan must not change result type").
  public static let featureNotSupported = "0A000"
  public static let invalidStatementName = "26000"
  public static let undefinedTable = "42P01"
  public static let undefinedColumn = "42703"

  public init(
    kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil,
    constraint: String? = nil, table: String? = nil, column: String? = nil, hint: String? = nil,
    decodingProblem: DecodingProblem? = nil
  ) {
    self.kind = kind
    self.sqlState = sqlState
    self.message = message
    self.detail = detail
    self.constraint = constraint
    self.table = table
    self.column = column
    self.hint = hint
    self.decodingProblem = decodingProblem
  }

  /// True when the database is out of reach rather than the request being wrong: the app
  /// answers 503 and a retry later may succeed.
  public var isUnavailable: Bool {
    switch kind {
    case .connection, .poolTimeout, .closed: return true
    case .decoding: return false
    case .server: return Self.isConnectionClass(sqlState)
    }
  }

  /// True when PostgreSQL ended the transaction to break a conflict with another one (a
  /// deadlock, a serialization failure): it was rolled back, and running it again may succeed.
  public var isTransientConflict: Bool {
    kind == .server && (sqlState == Self.deadlockDetected || sqlState == Self.serializationFailure)
  }

  /// True when a foreign key refused a row because the row it names is not there. Under READ
  /// COMMITTED that is also how a race ends: a statement read the referenced row, and another
  /// transaction deleted it before the check (which waits for that transaction, then finds the
  /// row gone). Done again, the statement reads the deletion and no longer names the row, so
  /// background work that must not be lost retries it a bounded number of times, as a lost
  /// conflict, and keeps it as failed only when it lasts (a reference that was never there).
  public var isForeignKeyViolation: Bool {
    kind == .server && sqlState == Self.foreignKeyViolation
  }

  /// True when the server refused the work for a state of its own that passes, not for
  /// anything the work asked: a lock wait or the statement ran out of time (`lock_timeout`,
  /// `statement_timeout`, an operator's `pg_cancel_backend`, or the session's own cancel at
  /// shutdown), a transaction left idle past `idle_in_transaction_session_timeout`, the server
  /// short of disk, memory or connections (class 53, but `53400`, a limit the work itself
  /// exceeds), a read-only transaction on a node a failover has just demoted, a system or I/O
  /// error (`58000`, `58030`), or a prepared statement the session has forgotten or whose
  /// table changed shape under a transaction (`invalidatesPreparedStatement`; prepared afresh
  /// next time). Its transaction was rolled back, and the same work may succeed later.
  public var isTransientRefusal: Bool {
    guard kind == .server, let sqlState else { return false }
    return Self.transientRefusals.contains(sqlState) || invalidatesPreparedStatement
  }

  /// The SQLSTATEs of `isTransientRefusal` (the statement cache's own two aside).
  static let transientRefusals: Set<String> = [
    lockNotAvailable, queryCanceled, idleInTransactionSessionTimeout, readOnlySQLTransaction,
    insufficientResources, diskFull, outOfMemory, tooManyConnections, systemError, ioError,
  ]

  /// True when the same work may succeed if it is done again later: the database was out of
  /// reach (`isUnavailable`), the transaction lost a conflict (`isTransientConflict`), or the
  /// server refused it for a state that passes (`isTransientRefusal`). Background work that
  /// must not be lost (a stored notification) stays pending after such an error and is kept as
  /// failed only after any other: a constraint, a bad value, a statement PostgreSQL cannot
  /// run, a decoding error, which doing the same work again would only repeat.
  public var isTransient: Bool { isUnavailable || isTransientConflict || isTransientRefusal }

  /// A statement the session prepared is gone (`26000`), or a table it returns changed shape
  /// ("cached plan must not change result type", `0A000`): the statement cache forgets it, so
  /// the next run prepares it afresh.
  var invalidatesPreparedStatement: Bool {
    kind == .server
      && (sqlState == Self.invalidStatementName
        || (sqlState == Self.featureNotSupported && message.contains("cached plan")))
  }

  /// SQLSTATEs after which the session is gone: class 08 and the shutdown codes.
  static func isConnectionClass(_ state: String?) -> Bool {
    guard let state else { return false }
    return state.hasPrefix("08") || state == adminShutdown || state == crashShutdown
      || state == cannotConnectNow
  }

  /// Whether the connection that produced this error must not be reused.
  var breaksConnection: Bool {
    kind == .connection || (kind == .server && Self.isConnectionClass(sqlState))
  }

  public var description: String {
    switch kind {
    case .connection: return "PostgresError.connection"
    case .server: return "PostgresError.server(\(sqlState ?? "unknown"))"
    case .decoding: return "PostgresError.decoding"
    case .poolTimeout: return "PostgresError.poolTimeout"
    case .closed: return "PostgresError.closed"
    }
  }

  /// Every field, for a log line (never for a response body).
  public var logMetadata: [String: LogValue] {
    var fields: [String: LogValue] = [
      "pg_error": .string(description), "pg_message": .string(message),
    ]
    if let sqlState { fields["pg_sqlstate"] = .string(sqlState) }
    if let detail { fields["pg_detail"] = .string(detail) }
    if let constraint { fields["pg_constraint"] = .string(constraint) }
    if let table { fields["pg_table"] = .string(table) }
    if let column { fields["pg_column"] = .string(column) }
    if let hint { fields["pg_hint"] = .string(hint) }
    return fields
  }
}
