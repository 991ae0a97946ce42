/// One client's bucket: up to `burst` tokens, refilled continuously at the configured rate;
/// each request takes one. Times are monotonic nanoseconds.
struct TokenBucket: Sendable {
  var tokens: Double
  var updatedNs: UInt64

  /// A new key starts with a full bucket.
  init(spec: RateSpec, nowNs: UInt64) {
    tokens = Double(spec.burst)
    updatedNs = nowNs
  }

  mutating func refill(_ spec: RateSpec, nowNs: UInt64) {
    guard nowNs > updatedNs else { return }
    let elapsed = Double(nowNs - updatedNs) / 1e9
    tokens = min(Double(spec.burst), tokens + elapsed * spec.perSecond)
    updatedNs = nowNs
  }

  /// Full again: it holds nothing a fresh bucket would not, so it may be forgotten.
  func isIdle(_ spec: RateSpec, nowNs: UInt64) -> Bool {
    var copy = self
    copy.refill(spec, nowNs: nowNs)
    return copy.tokens >= Double(spec.burst)
  }

  /// Takes a token if there is one, and says what the headers should report.
  mutating func take(_ spec: RateSpec, nowNs: UInt64) -> RateLimitDecision {
    refill(spec, nowNs: nowNs)
    let allowed = tokens >= 1
    if allowed { tokens -= 1 }
    let untilFull = (Double(spec.burst) - tokens) / spec.perSecond
    let untilOne = allowed ? 0 : (1 - tokens) / spec.perSecond
    return RateLimitDecision(
      allowed: allowed, limit: spec.burst, remaining: Int(tokens.rounded(.down)),
      resetSeconds: Int(untilFull.rounded(.up)),
      retryAfterSeconds: max(1, Int(untilOne.rounded(.up))))
  }
}
