/// How verifyReceipt misbehaves, on request.
enum FakeFaultMode: String, Sendable, Codable, CaseIterable {
  /// Answer normally.
  case none
  /// Hold the answer for `delay_ms` (then answer normally), so the client times out.
  case timeout
  /// HTTP 503 with a plain-text body, like an overloaded front end.
  case http503
  /// Status 21005 ("receipt server not available") with `is_retryable: true`.
  case status21005
  /// Status 21002 without `is_retryable`: "malformed, or the service experienced a temporary
  /// issue. Try again." (Apple's own table), as its service answers when it has one.
  case status21002
  /// Status 21199 (internal data access error) with `is_retryable: true`.
  case retryable
}
