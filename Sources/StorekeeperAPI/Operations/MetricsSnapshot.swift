import StorekeeperLogging
import Synchronization

/// The last lines each `RefreshedMetrics` source computed. A background loop refreshes them
/// every `METRICS_REFRESH_INTERVAL`; a scrape only reads them, so however often Prometheus (or
/// anyone holding a credential) scrapes, PostgreSQL counts those tables at most once per
/// interval per instance. Only a scrape that finds a source with nothing yet (the first,
/// before the loop's first run) computes that source itself.
package final class MetricsSnapshot: Sendable {
  private let sources: [any RefreshedMetrics]
  private let logger: Logger
  /// Each source's last lines, by its index in `sources`; nil until first computed.
  private let stored: Mutex<[[String]?]>
  /// Refreshes in which every source was recomputed: a counter that stops rising says the
  /// stored gauges have gone stale (an alert's series), and one that rose by two says a full
  /// refresh began after a given moment (how the end-to-end tests wait for fresh counts).
  private let refreshes = Atomic<Int64>(0)

  package init(sources: [any RefreshedMetrics], logger: Logger) {
    self.sources = sources
    self.logger = logger
    self.stored = Mutex(Array(repeating: nil, count: sources.count))
  }

  /// Recomputes every source's lines; a source that fails keeps its previous ones (and the
  /// error is logged), so a database hiccup blanks no gauge and stales no other source's.
  package func refresh() async {
    var failed = false
    for (index, source) in sources.enumerated() {
      do {
        let lines = try await source.lines()
        stored.withLock { $0[index] = lines }
      } catch {
        failed = true
        logger.warning(
          "metrics refresh failed",
          ["source": .string("\(type(of: source))"), "error": .string("\(error)")])
      }
    }
    if !failed { refreshes.add(1, ordering: .releasing) }
  }

  /// The stored lines, each source's computed now only if it has none yet; `unread` counts
  /// the sources left out because that failed (the database down before the first refresh),
  /// so a scrape still shows every other source and the counters held in memory.
  func lines(unread: inout Int) async -> [String] {
    // Read before the lines, which each refresh stores before it counts: the lines shown are
    // then at least as new as the refresh the count says.
    let refreshed = refreshes.load(ordering: .acquiring)
    var lines: [String] = []
    for (index, source) in sources.enumerated() {
      if let kept = stored.withLock({ $0[index] }) {
        lines += kept
        continue
      }
      do {
        let fresh = try await source.lines()
        stored.withLock { $0[index] = fresh }
        lines += fresh
      } catch {
        unread += 1
        // A scraper that left cancelled the count: nothing to warn of.
        if !Task.isCancelled {
          logger.warning(
            "metrics source unread for a scrape",
            ["source": .string("\(type(of: source))"), "error": .string("\(error)")])
        }
      }
    }
    return lines + [
      "# HELP storekeeper_metrics_refreshes_total Background recounts of the gauges recomputed "
        + "every METRICS_REFRESH_INTERVAL that succeeded since start (flat: those are stale).",
      "# TYPE storekeeper_metrics_refreshes_total counter",
      "storekeeper_metrics_refreshes_total \(refreshed)",
    ]
  }
}
