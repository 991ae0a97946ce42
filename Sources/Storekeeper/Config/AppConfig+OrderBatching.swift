import StorekeeperCore

/// Group commit of `POST /v1/orders` (see `OrderGroupCommit`).
extension AppConfig {
  static func readOrderBatching(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    config.orderBatchMax = try reader.integer("ORDER_BATCH_MAX", 1...1000) ?? config.orderBatchMax
    config.orderBatchFlushes =
      try reader.integer("ORDER_BATCH_FLUSHES", 1...64) ?? config.orderBatchFlushes
  }
}
