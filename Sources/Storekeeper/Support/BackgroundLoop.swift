import StorekeeperLogging
import Synchronization

/// Runs `body` every `intervalMs`, or at once when woken; wake-ups while it runs coalesce into
/// one more run. Used by the sweeper and the retry and notification workers.
final class BackgroundLoop: Sendable {
  private let name: String
  private let intervalMs: Int64
  private let logger: Logger
  private let body: @Sendable () async -> Void
  private let stream: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation
  private let tasks = Mutex<[Task<Void, Never>]>([])

  init(name: String, intervalMs: Int64, logger: Logger, body: @escaping @Sendable () async -> Void)
  {
    self.name = name
    self.intervalMs = intervalMs
    self.logger = logger
    self.body = body
    (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
  }

  func start() {
    let stream = self.stream
    let body = self.body
    let runner = Task {
      for await _ in stream { await body() }
    }
    let continuation = self.continuation
    let interval = intervalMs
    let ticker = Task {
      continuation.yield()
      while !Task.isCancelled {
        try? await Task.sleep(for: .milliseconds(interval))
        continuation.yield()
      }
    }
    tasks.withLock { $0 = [runner, ticker] }
    logger.debug(
      "background loop started", ["loop": .string(name), "interval_ms": .int(Int(interval))])
  }

  func wake() { continuation.yield() }

  /// Stops ticking, lets a run in progress finish, then returns.
  func stop() async {
    let running = tasks.withLock { tasks in
      defer { tasks = [] }
      return tasks
    }
    continuation.finish()
    running.last?.cancel()
    for task in running { await task.value }
  }
}
