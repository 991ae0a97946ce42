import StorekeeperCore
import StorekeeperLogging
import Synchronization

/// Services started and stopped as a list: start runs each in a task of its own, shutdown
/// cancels them all and waits (bounded) for each to finish the work in hand.
package final class ServiceGroup: Sendable {
  let services: [any Service]
  private let logger: Logger
  private let tasks = Mutex<[Task<Void, Never>]>([])

  package init(_ services: [any Service], logger: Logger) {
    self.services = services
    self.logger = logger
  }

  package func start() {
    let started = services.map { service in Task { await service.run() } }
    tasks.withLock { $0 = started }
    logger.debug(
      "services started", ["services": .string(services.map(\.name).joined(separator: ","))])
  }

  /// Cancels every service and waits for them; false when they did not all return within
  /// `grace`.
  package func shutdown(within grace: Duration) async -> Bool {
    let running = tasks.withLock { tasks in
      defer { tasks = [] }
      return tasks
    }
    for task in running { task.cancel() }
    return await BoundedWait.finish(within: grace) {
      for task in running { await task.value }
    }
  }
}
