import StorekeeperAPI
import StorekeeperCore

/// The abuse limits' settings: rates, trusted proxies, verification and open-order caps.
extension AppConfig {
  static func readLimits(_ env: [String: String], into config: inout AppConfig) throws {
    for (name, keyPath) in [
      ("RATE_LIMIT_PER_ADDRESS", \AppConfig.rateLimitPerAddress),
      ("RATE_LIMIT_PER_USER", \AppConfig.rateLimitPerUser),
    ] {
      guard let text = env[name], !text.isEmpty else { continue }
      do {
        config[keyPath: keyPath] = try RateSpec.parse(text)
      } catch {
        throw ConfigError(
          variable: name,
          problem: "must be N/s, N/min or N/h with an optional ,burst=M (or off), got \"\(text)\"")
      }
    }
    if let text = env["PROOF_BYTES_PER_USER"], !text.isEmpty {
      do {
        config.proofBytesPerUser = try RateSpec.parse(text, sizes: true)
      } catch {
        throw ConfigError(
          variable: "PROOF_BYTES_PER_USER",
          problem: "must be an amount of bytes per s, min or h (16MB/h) with an optional "
            + ",burst=AMOUNT (or off), got \"\(text)\"")
      }
    }
    if let text = env["TRUSTED_PROXIES"], !text.isEmpty {
      guard let networks = ClientAddress.parseTrusted(text) else {
        throw ConfigError(
          variable: "TRUSTED_PROXIES",
          problem: "must be comma-separated addresses or CIDR blocks, got \"\(text)\"")
      }
      // A block this wide trusts the internet: every client would name its own address in
      // X-Forwarded-For and pick its own rate-limit and admin-failure key.
      if let wide = networks.first(where: { $0.prefixLength < 8 }) {
        throw ConfigError(
          variable: "TRUSTED_PROXIES",
          problem:
            "a /\(wide.prefixLength) block trusts nearly every address; name the proxies' own addresses or networks (/8 or narrower)"
        )
      }
      config.trustedProxies = networks
    }
    let reader = ConfigReader(env: env)
    config.rateLimitMaxKeys =
      try reader.integer("RATE_LIMIT_MAX_KEYS", 100...10_000_000) ?? config.rateLimitMaxKeys
    config.verifyConcurrency =
      try reader.integer("VERIFY_CONCURRENCY", 1...4096) ?? config.verifyConcurrency
    config.verifyReceiptConcurrency =
      try reader.integer("VERIFY_RECEIPT_CONCURRENCY", 1...4096) ?? config.verifyReceiptConcurrency
    config.googlePlayConcurrency =
      try reader.integer("GOOGLE_PLAY_CONCURRENCY", 1...4096) ?? config.googlePlayConcurrency
    config.verifyQueueLength =
      try reader.integer("VERIFY_QUEUE_LENGTH", 0...100_000) ?? config.verifyQueueLength
    if let ms = try reader.duration("VERIFY_QUEUE_TIMEOUT") {
      // A waiter holds its connection and an in-flight slot; past a minute its client has
      // most likely given up already.
      guard ms <= 60_000 else {
        throw ConfigError(
          variable: "VERIFY_QUEUE_TIMEOUT", problem: "must be at most 60s, got \(ms) ms")
      }
      config.verifyQueueTimeoutMs = ms
    }
    config.maxOpenOrdersPerUser =
      try reader.integer("MAX_OPEN_ORDERS_PER_USER", 1...10_000) ?? config.maxOpenOrdersPerUser
  }
}
