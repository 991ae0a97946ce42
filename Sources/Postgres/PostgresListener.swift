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
  private let wakeup = WakePipe()
  private let lifecycle = Mutex((started: false, stopped: false))

  static let initialBackoffMilliseconds: Int32 = 100
  static let maxBackoffMilliseconds: Int32 = 5_000

  public init(
    url: String, channels: [String], logger: Logger,
    onNotification: @escaping @Sendable (_ channel: String, _ payload: String) -> Void,
    onConnect: @escaping @Sendable () -> Void
  ) {
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
