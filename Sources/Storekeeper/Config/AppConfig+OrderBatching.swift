import StorekeeperCore

/// Group commit of `POST /v1/orders` (see `OrderGroupCommit`).
extension AppConfig {
  static func readOrderBatching(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    config.orderBatchMax = try reader.integer("ORDER_BATCH_MAX", 1...1000) ?? config.orderBatchMax
    config.orderBatchFlushes =
      try reader.integer("ORDER_BATCH_FLUSHES", 1...64) ?? config.orderBatchFlushes
    if let ms = try reader.duration("ORDER_QUEUE_TIMEOUT") {
      // A waiter holds its connection; past a minute its client has most likely given up
      // already, and the order would be written for nobody.
      guard ms <= 60_000 else {
        throw ConfigError(
          variable: "ORDER_QUEUE_TIMEOUT", problem: "must be at most 60s, got \(ms) ms")
      }
      config.orderQueueTimeoutMs = ms
    }
  }
}
