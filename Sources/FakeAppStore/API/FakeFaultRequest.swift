/// `POST /fake/v1/faults`.
struct FakeFaultRequest: Decodable, Sendable {
  /// "none", "timeout", "http503", "status21005", "status21002", "retryable".
  var mode: String
  /// Applies to the next `count` verifyReceipt requests.
  var count: Int?
  /// Applies for this many seconds.
  var seconds: Double?
  /// How long `timeout` holds an answer; default 30000.
  var delayMs: Int?
}
