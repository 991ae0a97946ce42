import AppStore

extension ServerAPIReceiptMetrics {
  /// Counters of this instance's App Store Server API calls for receipts, for `/metrics`.
  var lines: [String] {
    [
      "# HELP storekeeper_receipt_apple_calls_total App Store Server API calls made to judge "
        + "app receipts since start.",
      "# TYPE storekeeper_receipt_apple_calls_total counter",
      "storekeeper_receipt_apple_calls_total \(callsTotal)",
      "# HELP storekeeper_receipt_apple_call_limit_reached_total Receipts that reached "
        + "RECEIPT_APPLE_CALL_LIMIT before every transaction they list was confirmed.",
      "# TYPE storekeeper_receipt_apple_call_limit_reached_total counter",
      "storekeeper_receipt_apple_call_limit_reached_total \(callLimitReachedTotal)",
    ]
  }
}
