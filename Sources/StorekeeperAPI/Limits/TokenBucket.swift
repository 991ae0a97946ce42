/// One client's bucket: up to `burst` tokens, refilled continuously at the configured rate;
/// each request takes one, or its cost (the proof budget counts bytes). Times are monotonic
/// nanoseconds.
struct TokenBucket: Sendable {
  var tokens: Double
  var updatedNs: UInt64
  /// Fingerprints of the last posts charged in full, for a limit that charges an exact repeat
  /// less (`BucketStore.take(_:cost:repeatCost:fingerprint:nowNs:)`); empty for the others.
  var recent: [Int] = []
  static let recentKept = 4

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

  /// Takes `cost` tokens if there are that many, and says what the headers should report. A
  /// cost above the burst is charged as the whole burst, so it passes from a full bucket
  /// instead of never.
  mutating func take(_ spec: RateSpec, cost: Double = 1, nowNs: UInt64) -> RateLimitDecision {
    refill(spec, nowNs: nowNs)
    let cost = min(max(cost, 1), Double(spec.burst))
    let allowed = tokens >= cost
    if allowed { tokens -= cost }
    let untilFull = (Double(spec.burst) - tokens) / spec.perSecond
    let untilEnough = allowed ? 0 : (cost - tokens) / spec.perSecond
    return RateLimitDecision(
      allowed: allowed, limit: spec.burst, remaining: Int(tokens.rounded(.down)),
      resetSeconds: Int(untilFull.rounded(.up)),
      retryAfterSeconds: max(1, Int(untilEnough.rounded(.up))))
  }

  /// `take`, charging `repeatCost` instead of `cost` when `fingerprint` is one of the last
  /// posts charged in full: a client retrying the same report must not pay for its bytes again
  /// (they are stored once), but its repeats are not free either.
  mutating func take(
    _ spec: RateSpec, cost: Double, repeatCost: Double, fingerprint: Int, nowNs: UInt64
  ) -> RateLimitDecision {
    let repeated = recent.contains(fingerprint)
    let decision = take(spec, cost: repeated ? repeatCost : cost, nowNs: nowNs)
    if decision.allowed && !repeated {
      recent.append(fingerprint)
      if recent.count > Self.recentKept { recent.removeFirst(recent.count - Self.recentKept) }
    }
    return decision
  }
}
