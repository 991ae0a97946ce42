/// What one bucket said about one request, in the terms of the IETF RateLimit header fields
/// draft: the quota (`limit`, the burst), what is left of it, and seconds until it is whole.
struct RateLimitDecision: Sendable, Equatable {
  var allowed: Bool
  var limit: Int
  var remaining: Int
  var resetSeconds: Int
  /// For a refusal: seconds until one request will be let through again.
  var retryAfterSeconds: Int

  /// Of two buckets that both apply, the one closer to refusing is the one to report.
  func tighter(_ other: RateLimitDecision?) -> RateLimitDecision {
    guard let other else { return self }
    if allowed != other.allowed { return allowed ? other : self }
    return other.remaining < remaining ? other : self
  }

  var headers: [(String, String)] {
    [
      ("RateLimit-Limit", String(limit)), ("RateLimit-Remaining", String(remaining)),
      ("RateLimit-Reset", String(resetSeconds)),
    ]
  }
}
