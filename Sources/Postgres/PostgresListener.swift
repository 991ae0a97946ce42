import Foundation
import StorekeeperLogging
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// LISTENs on channels over its own session and thread, and survives the server going away.
///
/// After every successful (re)connect, once LISTEN is in place, `onConnect` runs: anything
/// sent while the listener was disconnected is lost, so the caller reloads its state there.
/// Reconnects back off from 100 ms to 5 s. Callbacks run on the listener's thread and must
/// not block for long. Call `stop()` when done; a listener starts at most once.
public final class PostgresListener: Sendable {
  private let parameters: Result<PostgresConnectionParameters, PostgresError>
  private let channels: [String]
  private let logger: Logger
  private let onNotification: @Sendable (_ channel: String, _ payload: String) -> Void
  private let onConnect: @Sendable () -> Void
  /// The variable the URL came from, named when its session turns out not to be its own.
  private let urlVariable: String?
  private let wakeup = WakePipe()
  private let lifecycle = Mutex((started: false, stopped: false))

  static let initialBackoffMilliseconds: Int32 = 100
  static let maxBackoffMilliseconds: Int32 = 5_000

  public init(
    url: String, urlVariable: String? = nil, channels: [String], logger: Logger,
    onNotification: @escaping @Sendable (_ channel: String, _ payload: String) -> Void,
    onConnect: @escaping @Sendable () -> Void
  ) {
    self.urlVariable = urlVariable
    parameters = Result {
      try PostgresConnectionParameters(url: url, connectTimeoutSeconds: 2)
    }.mapError { ($0 as? PostgresError) ?? PostgresError(kind: .connection, message: "bad URL") }
    self.channels = channels
    self.logger = logger
    self.onNotification = onNotification
    self.onConnect = onConnect
  }

  public func start() {
    let shouldStart = lifecycle.withLock { state in
      guard !state.started, !state.stopped else { return false }
      state.started = true
      return true
    }
    guard shouldStart else { return }
    let thread = Thread { [self] in run() }
    thread.name = "storekeeper.postgres.listener"
    thread.start()
  }

  /// Ends the thread soon (it closes its session on the way out); does not wait for it.
  public func stop() {
    lifecycle.withLock { $0.stopped = true }
    wakeup.signal()
  }

  private var isStopped: Bool { lifecycle.withLock { $0.stopped } }

  private func run() {
    var backoff = Self.initialBackoffMilliseconds
    while !isStopped {
      do {
        let connection = try PostgresConnection.connectBlocking(parameters.get(), logger: logger)
        // Before LISTEN, so that stays the session's last statement (pg_stat_activity).
        if let evidence = try Self.sharedSessionEvidence(
          connection, parameters.get(), logger: logger)
        {
          var fields: [String: LogValue] = [
            "evidence": .string(evidence), "channels": .string(channels.joined(separator: ",")),
          ]
          if let urlVariable { fields["setting"] = .string(urlVariable) }
          logger.error(
            "the listener's session is not its own: \(urlVariable ?? "its URL") reaches a transaction pooler, which drops a LISTEN with its transaction, so notifications will not arrive; point it at PostgreSQL itself or a session-mode pool",
            fields)
        }
        for channel in channels { try connection.listenBlocking(channel) }
        logger.info(
          "listening for notifications", ["channels": .string(channels.joined(separator: ","))])
        backoff = Self.initialBackoffMilliseconds
        onConnect()
        try receive(on: connection)
      } catch {
        guard !isStopped else { break }
        var fields = (error as? PostgresError)?.logMetadata ?? [:]
        fields["retry_in_ms"] = .int(Int(backoff))
        logger.warning("notification listener disconnected; reconnecting", fields)
        _ = wakeup.wait(milliseconds: backoff)
        backoff = min(backoff * 2, Self.maxBackoffMilliseconds)
      }
    }
    logger.info("notification listener stopped")
  }

  /// Why this session is not a session of its own, as a LISTEN needs, nil when nothing shows
  /// it: a server (or a session-mode pool) keeps one backend per session, while a transaction
  /// pooler hands each transaction whichever server connection is free. Two checks that a
  /// session of its own never fails: two statements of this session, apart, run on one backend,
  /// and a second session opened on the same URL between them gets a backend of its own (an idle
  /// transaction pooler hands it the server connection this one just gave back). A pooler under
  /// other load can pass both by chance, so this catches the mistake, not every instance of it.
  static func sharedSessionEvidence(
    _ connection: PostgresConnection, _ parameters: PostgresConnectionParameters, logger: Logger
  ) throws -> String? {
    let query: PostgresQuery =
      "SELECT pg_backend_pid()::text || '@' || pg_postmaster_start_time()::text AS backend"
    func backend(_ session: PostgresConnection) throws -> String? {
      try session.executeBlocking(query).rows().first?.decode("backend", as: String.self)
    }
    let first = try backend(connection)
    // A second session that cannot be opened (the server full) proves nothing either way.
    let other = try? PostgresConnection.connectBlocking(parameters, logger: logger)
    let others = other.flatMap { try? backend($0) }
    let again = try backend(connection)
    if first != again { return "two statements of this session ran on different backends" }
    if let others, others == first {
      return "another session on the same URL was handed this session's backend"
    }
    return nil
  }

  /// Delivers notifications until stopped (returns) or the session breaks (throws).
  private func receive(on connection: PostgresConnection) throws {
    deliver(connection.takeNotifications())
    while !isStopped {
      var descriptors = [
        pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeup.readDescriptor, events: Int16(POLLIN), revents: 0),
      ]
      // Without a wake-up pipe, a timeout is the only way to notice stop().
      let ready = poll(&descriptors, wakeup.isAvailable ? 2 : 1, wakeup.isAvailable ? -1 : 250)
      if ready < 0 {
        if errno == EINTR { continue }
        throw PostgresError(kind: .connection, message: "poll failed (errno \(errno))")
      }
      if descriptors[1].revents != 0 { return }
      if descriptors[0].revents != 0 {
        guard connection.consumeInput() else {
          throw PostgresError(kind: .connection, message: "listener session lost")
        }
        deliver(connection.takeNotifications())
      }
    }
  }

  private func deliver(_ notifications: [(channel: String, payload: String)]) {
    for notification in notifications { onNotification(notification.channel, notification.payload) }
  }
}
