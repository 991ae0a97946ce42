import HTTP
import Synchronization

/// Counts answered requests by status class and keeps a latency histogram, for `/metrics`.
/// Called on the event loops: one uncontended lock and a few additions per request.
package final class RequestMetrics: RequestObserver {

  package init() {
  }
  /// Upper bounds of the latency buckets, in seconds (Prometheus `le`), as nanoseconds.
  static let bucketBounds: [(label: String, nanoseconds: UInt64)] = [
    ("0.001", 1_000_000), ("0.005", 5_000_000), ("0.025", 25_000_000), ("0.1", 100_000_000),
    ("0.5", 500_000_000), ("2.5", 2_500_000_000), ("10", 10_000_000_000),
  ]

  struct Snapshot: Sendable {
    /// Requests by status class: index 1 is 1xx … index 5 is 5xx.
    var byClass = [Int](repeating: 0, count: 6)
    /// Cumulative counts per bucket bound, then +Inf.
    var buckets = [Int](repeating: 0, count: RequestMetrics.bucketBounds.count + 1)
    var totalNanoseconds: UInt64 = 0
    var count = 0
  }

  private let state = Mutex(Snapshot())

  package func requestCompleted(method: HTTPMethod, status: Int, nanoseconds: UInt64) {
    let statusClass = min(max(status / 100, 0), 5)
    let bucket =
      Self.bucketBounds.firstIndex { nanoseconds <= $0.nanoseconds } ?? Self.bucketBounds.count
    state.withLock { state in
      state.byClass[statusClass] += 1
      state.buckets[bucket] += 1
      state.totalNanoseconds &+= nanoseconds
      state.count += 1
    }
  }

  var snapshot: Snapshot { state.withLock { $0 } }

  /// Prometheus text: a counter by status class and a latency histogram.
  func render() -> [String] {
    let snapshot = self.snapshot
    var lines = [
      "# HELP storekeeper_http_requests_total Requests answered, by status class.",
      "# TYPE storekeeper_http_requests_total counter",
    ]
    for statusClass in 1...5 {
      lines.append(
        "storekeeper_http_requests_total{class=\"\(statusClass)xx\"} \(snapshot.byClass[statusClass])"
      )
    }
    lines.append(
      "# HELP storekeeper_http_request_duration_seconds Time from a request's last byte (head and body read) to its response: the server's time, not the client's upload."
    )
    lines.append("# TYPE storekeeper_http_request_duration_seconds histogram")
    var cumulative = 0
    for (index, bound) in Self.bucketBounds.enumerated() {
      cumulative += snapshot.buckets[index]
      lines.append(
        "storekeeper_http_request_duration_seconds_bucket{le=\"\(bound.label)\"} \(cumulative)")
    }
    lines.append("storekeeper_http_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.count)")
    let seconds = Double(snapshot.totalNanoseconds) / 1_000_000_000
    lines.append("storekeeper_http_request_duration_seconds_sum \(seconds)")
    lines.append("storekeeper_http_request_duration_seconds_count \(snapshot.count)")
    return lines
  }
}
