import StorekeeperCore

/// The webhook delivery settings (`WEBHOOK_*`).
extension AppConfig {
  static func readWebhooks(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    var settings = WebhookSettings()
    settings.allowInsecureURLs = config.allowInsecureURLs
    settings.retryBaseMs = try reader.duration("WEBHOOK_RETRY_BASE") ?? settings.retryBaseMs
    settings.retryWindowMs = try reader.duration("WEBHOOK_RETRY_WINDOW") ?? settings.retryWindowMs
    // Shorter than the first wait, every delivery would be given up at its first failure.
    guard settings.retryWindowMs >= settings.retryBaseMs else {
      throw ConfigError(
        variable: "WEBHOOK_RETRY_WINDOW", problem: "must be at least WEBHOOK_RETRY_BASE")
    }
    if let timeout = try reader.duration("WEBHOOK_TIMEOUT") {
      guard timeout <= 60_000 else {
        throw ConfigError(variable: "WEBHOOK_TIMEOUT", problem: "must be at most 60s")
      }
      settings.timeoutMs = timeout
    }
    settings.disableAfterMs =
      try reader.duration("WEBHOOK_DISABLE_AFTER") ?? settings.disableAfterMs
    settings.secretOverlapMs =
      try reader.duration("WEBHOOK_SECRET_OVERLAP") ?? settings.secretOverlapMs
    settings.pollIntervalMs =
      try reader.duration("WEBHOOK_POLL_INTERVAL") ?? settings.pollIntervalMs
    settings.maxEndpoints =
      try reader.integer("WEBHOOK_MAX_ENDPOINTS", 1...1000) ?? settings.maxEndpoints
    settings.concurrencyPerEndpoint =
      try reader.integer("WEBHOOK_CONCURRENCY_PER_ENDPOINT", 1...64)
      ?? settings.concurrencyPerEndpoint
    settings.concurrency =
      try reader.integer("WEBHOOK_CONCURRENCY", 1...1024) ?? settings.concurrency
    settings.replayMax =
      try reader.integer("WEBHOOK_REPLAY_MAX", 1...1_000_000) ?? settings.replayMax
    settings.retentionMs = try reader.duration("WEBHOOK_RETENTION") ?? settings.retentionMs
    config.webhooks = settings
  }
}
