import StorekeeperAPI
import StorekeeperCore

extension AppConfig {
  /// `METRICS_TOKEN` and `METRICS_REFRESH_INTERVAL`.
  static func readMetrics(_ env: [String: String], into config: inout AppConfig) throws {
    if let text = env["METRICS_TOKEN"], !text.isEmpty {
      config.metricsToken = try AdminToken.parseMetricsToken(text)
    }
    let reader = ConfigReader(env: env)
    if let interval = try reader.duration("METRICS_REFRESH_INTERVAL") {
      guard interval >= 1000 else {
        throw ConfigError(variable: "METRICS_REFRESH_INTERVAL", problem: "must be at least 1s")
      }
      config.metricsRefreshIntervalMs = interval
    }
  }
}
