import StorekeeperLogging
import Synchronization

/// The last lines `OrderCountMetrics` computed. A background loop refreshes them every
/// `METRICS_REFRESH_INTERVAL`; a scrape only reads them, so however often Prometheus (or
/// anyone holding a credential) scrapes, PostgreSQL counts the orders at most once per
/// interval per instance. Only a scrape that finds nothing yet (the first, before the loop's
/// first run) computes them itself.
package final class MetricsSnapshot: Sendable {
  private let source: OrderCountMetrics
  private let logger: Logger
  private let stored = Mutex<[String]?>(nil)

  package init(source: OrderCountMetrics, logger: Logger) {
    self.source = source
    self.logger = logger
  }

  /// Recomputes the lines; on failure the previous ones are kept (and the error logged), so a
  /// database hiccup does not blank the gauges.
  package func refresh() async {
    do {
      let lines = try await source.lines()
      stored.withLock { $0 = lines }
    } catch {
      logger.warning("metrics refresh failed", ["error": .string("\(error)")])
    }
  }

  /// The stored lines, computed now only if none were yet.
  func lines() async throws -> [String] {
    if let lines = stored.withLock({ $0 }) { return lines }
    let lines = try await source.lines()
    stored.withLock { $0 = lines }
    return lines
  }
}
