import StorekeeperCore
import StorekeeperLogging
import Synchronization

/// Services started and stopped as a list: start runs each in a task of its own, shutdown
/// cancels them all and waits (bounded) for each to finish the work in hand.
package final class ServiceGroup: Sendable {
  let services: [any Service]
  private let logger: Logger
  private let tasks = Mutex<[Task<Void, Never>]>([])
  /// The indices in `services` of those whose run has returned.
  private let returned = Mutex<Set<Int>>([])

  package init(_ services: [any Service], logger: Logger) {
    self.services = services
    self.logger = logger
  }

  package func start() {
    let started = services.enumerated().map { index, service in
      Task {
        await service.run()
        returned.withLock { _ = $0.insert(index) }
      }
    }
    tasks.withLock { $0 = started }
    logger.debug(
      "services started", ["services": .string(services.map(\.name).joined(separator: ","))])
  }

  /// Cancels every service and waits for them; the names of those that did not return within
  /// `grace` (empty when all did), so the log can say what was still running: a webhook
  /// receiver or a store slow to answer as well as a database that is not.
  package func shutdown(within grace: Duration) async -> [String] {
    let running = tasks.withLock { tasks in
      defer { tasks = [] }
      return tasks
    }
    for task in running { task.cancel() }
    let finished = await BoundedWait.finish(within: grace) {
      for task in running { await task.value }
    }
    if finished { return [] }
    let done = returned.withLock { $0 }
    return services.indices.filter { !done.contains($0) }.map { services[$0].name }
  }
}
