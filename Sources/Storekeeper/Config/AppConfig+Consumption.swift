import StorekeeperCore

/// How Apple's consumption requests are answered (`CONSUMPTION_*`).
extension AppConfig {
  static func readConsumption(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    if let text = env["CONSUMPTION_REFUND_PREFERENCE"], !text.isEmpty {
      guard let preference = ConsumptionPolicy.RefundPreference(rawValue: text) else {
        let names = ConsumptionPolicy.RefundPreference.allCases.map(\.rawValue)
        throw ConfigError(
          variable: "CONSUMPTION_REFUND_PREFERENCE",
          problem: "must be one of \(names.joined(separator: ", ")), got \"\(text)\"")
      }
      config.consumption.refundPreference = preference
    }
    switch env["CONSUMPTION_SAMPLE_CONTENT_PROVIDED"] ?? "" {
    case "", "false", "0": config.consumption.sampleContentProvided = false
    case "true", "1": config.consumption.sampleContentProvided = true
    case let other:
      throw ConfigError(
        variable: "CONSUMPTION_SAMPLE_CONTENT_PROVIDED",
        problem: "must be true or false, got \"\(other)\"")
    }
    config.consumptionRetryBaseMs =
      try reader.duration("CONSUMPTION_RETRY_BASE") ?? config.consumptionRetryBaseMs
    // Answers go to Apple through the Server API: without its key none is ever sent, and an
    // operator who set a preference would believe refunds of consumed goods are contested.
    if config.apiKeyPath == nil,
      let set = [
        "CONSUMPTION_REFUND_PREFERENCE", "CONSUMPTION_SAMPLE_CONTENT_PROVIDED",
        "CONSUMPTION_RETRY_BASE",
      ].first(where: { !(env[$0] ?? "").isEmpty })
    {
      throw ConfigError(
        variable: set,
        problem: "needs the App Store Server API key (APPLE_API_KEY_FILE, _ID, APPLE_API_ISSUER_ID)"
      )
    }
  }
}
