/// A part of `/metrics` that counts rows of a table that grows with the store (every order,
/// every notification Apple ever sent): too costly for each scrape, since anyone holding a
/// metrics credential decides how often that is. `MetricsSnapshot` computes its lines every
/// `METRICS_REFRESH_INTERVAL` and a scrape reads the last ones from memory.
package protocol RefreshedMetrics: Sendable {
  func lines() async throws -> [String]
}
