import StorekeeperCore

extension AppConfig {
  static func readReconcile(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    var settings = ReconcileSettings()
    switch reader.value("RECONCILE_INTERVAL") {
    case nil, "off", "0": settings.intervalMs = nil
    case .some:
      settings.intervalMs = try reader.duration("RECONCILE_INTERVAL")
    }
    settings.batchSize = try reader.integer("RECONCILE_BATCH_SIZE", 1...1000) ?? settings.batchSize
    settings.maxPerPass =
      try reader.integer("RECONCILE_MAX_PER_PASS", 1...1_000_000) ?? settings.maxPerPass
    if let text = reader.value("RECONCILE_RATE") {
      guard let rate = Double(text), rate.isFinite, rate > 0, rate <= 1000 else {
        throw ConfigError(
          variable: "RECONCILE_RATE",
          problem: "must be requests per second, more than 0 and at most 1000, got \"\(text)\"")
      }
      settings.ratePerSecond = rate
    }
    settings.recentMs = try reader.duration("RECONCILE_RECENT") ?? settings.recentMs
    if settings.intervalMs != nil, config.apiKeyPath == nil {
      throw ConfigError(
        variable: "RECONCILE_INTERVAL",
        problem: "needs the App Store Server API key (APPLE_API_KEY_FILE, _ID, APPLE_API_ISSUER_ID)"
      )
    }
    config.reconcile = settings
  }
}
