import Dispatch
import StorekeeperLogging
import Synchronization

/// A bounded set of sessions, opened lazily and reopened after the server comes back.
///
/// Callers wait in FIFO order for a free session, up to `acquireTimeout`. A session that
/// broke (server restart, network) is dropped instead of being returned, so the next caller
/// opens a fresh one: there is no background reconnect loop and no restart is needed. While
/// the server is down, opening fails fast (a refused connection is immediate) with a
/// `PostgresError` whose `isUnavailable` is true.
public final class PostgresPool: PostgresExecutor, Sendable {
  public let configuration: PostgresConfiguration
  let logger: Logger
  private let parameters: Result<PostgresConnectionParameters, PostgresError>
  private let state = Mutex(PostgresPoolState())
  /// Every statement sent through this pool or its transactions.
  public let roundTrips = PostgresRoundTrips()

  public init(configuration: PostgresConfiguration, logger: Logger) {
    self.configuration = configuration
    self.logger = logger
    do {
      parameters = .success(
        try PostgresConnectionParameters(
          url: configuration.url, connectTimeoutSeconds: configuration.connectTimeoutSeconds))
    } catch let error as PostgresError {
      logger.error("invalid database URL", error.logMetadata)
      parameters = .failure(error)
    } catch {
      parameters = .failure(PostgresError(kind: .connection, message: "invalid database URL"))
    }
  }

  // MARK: PostgresExecutor

  @discardableResult
  public func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
    roundTrips.add()
    return try await withConnection { try await $0.query(query) }
  }

  @discardableResult
  public func execute(_ query: PostgresQuery) async throws -> Int {
    roundTrips.add()
    return try await withConnection { try await $0.execute(query) }
  }

  /// `execute`, waiting at most `acquireTimeout` for a session instead of the pool's own: for
  /// a caller that holds one of the pool's sessions while it asks (a pool of one would never
  /// lend it a second).
  @discardableResult
  public func execute(_ query: PostgresQuery, acquireTimeout: Duration) async throws -> Int {
    roundTrips.add()
    return try await withConnection(acquireTimeout: acquireTimeout) { try await $0.execute(query) }
  }

  // MARK: health and lifecycle

  /// True when a session can be had and answers `SELECT 1` in time.
  public func isHealthy() async -> Bool {
    let timeout = configuration.healthCheckTimeout
    do {
      return try await withConnection(acquireTimeout: min(configuration.acquireTimeout, timeout)) {
        let rows = try await $0.query("SELECT 1 AS ok", timeout: timeout)
        return try rows.first?.decode("ok", as: Int.self) == 1
      }
    } catch {
      return false
    }
  }

  /// Closes idle sessions and fails waiting callers; sessions in use close when returned.
  public func shutdown() async {
    let (idle, waiters) = state.withLock { state in
      state.closed = true
      let idle = state.idle
      state.idle = []
      state.open -= idle.count
      let waiters = state.waiters
      state.waiters = []
      return (idle, waiters)
    }
    for waiter in waiters { waiter.continuation.resume(throwing: Self.closedError) }
    _ = idle  // dropping the last references closes the sessions (PQfinish in deinit)
  }

  /// Sessions open or being opened, idle ones included (for metrics).
  public var openSessions: Int { state.withLock { $0.open } }

  /// Callers queued for a session (for tests and metrics).
  var waiterCount: Int { state.withLock { $0.waiters.count } }

  // MARK: sessions

  /// Lends a session to `body` and takes it back; a session that broke is dropped.
  func withConnection<T: Sendable>(
    acquireTimeout: Duration? = nil, _ body: (PostgresConnection) async throws -> T
  ) async throws -> T {
    let connection = try await acquire(timeout: acquireTimeout ?? configuration.acquireTimeout)
    let value: T
    do {
      value = try await body(connection)
    } catch {
      let broken = (error as? PostgresError)?.breaksConnection ?? false
      release(connection, reusable: !broken && connection.isReusable)
      throw error
    }
    release(connection, reusable: connection.isReusable)
    return value
  }

  private static let closedError = PostgresError(kind: .closed, message: "the pool is shut down")

  private func acquire(timeout: Duration) async throws -> PostgresConnection {
    let lease = try await lease(timeout: timeout)
    if case .connection(let connection) = lease {
      if connection.isUsableAfterIdle() { return connection }
      logger.info("dropping an idle database session the server closed")
    }
    // Either a free slot, or a dead idle session whose slot we keep.
    let parameters: PostgresConnectionParameters
    do {
      parameters = try self.parameters.get()
      return try await PostgresConnection.connect(
        parameters, statementCacheCapacity: configuration.statementCacheCapacity, logger: logger)
    } catch {
      giveBack(nil)
      if let error = error as? PostgresError {
        logger.warning("cannot open a database session", error.logMetadata)
      }
      throw error
    }
  }

  private func lease(timeout: Duration) async throws -> PostgresPoolState.Lease {
    let max = max(1, configuration.maxConnections)
    return try await withCheckedThrowingContinuation { continuation in
      let deadline = DispatchTime.now() + timeout.dispatchInterval
      let (outcome, sweep) = state.withLock {
        state -> (Result<PostgresPoolState.Lease, PostgresError>?, DispatchTime?) in
        if state.closed { return (.failure(Self.closedError), nil) }
        if let lease = state.take(maxConnections: max) { return (.success(lease), nil) }
        return (nil, state.wait(continuation, until: deadline))
      }
      if let outcome { continuation.resume(with: outcome) }
      // Scheduled outside the lock: a timer is a system call and a wake-up of dispatch's
      // timer thread, which every other caller of the pool would otherwise queue behind.
      if let sweep { scheduleSweep(at: sweep) }
    }
  }

  private func scheduleSweep(at time: DispatchTime) {
    DispatchQueue.global().asyncAfter(deadline: time) { [weak self] in
      self?.sweepWaiters(scheduled: time)
    }
  }

  private func sweepWaiters(scheduled: DispatchTime) {
    let (expired, next) = state.withLock { $0.sweep(now: .now(), scheduled: scheduled) }
    for waiter in expired {
      waiter.continuation.resume(
        throwing: PostgresError(
          kind: .poolTimeout, message: "no database session became free in time"))
    }
    if let next { scheduleSweep(at: next) }
  }

  private func release(_ connection: PostgresConnection, reusable: Bool) {
    if !reusable { logger.debug("dropping a database session that is no longer usable") }
    giveBack(reusable ? connection : nil)
  }

  private func giveBack(_ connection: PostgresConnection?) {
    guard let (waiter, lease) = state.withLock({ $0.give(back: connection) }) else { return }
    waiter.continuation.resume(returning: lease)
  }
}
