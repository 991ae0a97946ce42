import Synchronization

/// Token buckets by key (a client address, a user) with a hard cap on how many keys it tracks,
/// so a flood of distinct addresses or user ids cannot grow memory without bound. A bucket that
/// has refilled holds nothing a new one would not, so idle buckets are dropped first; past the
/// cap with every bucket busy, an arbitrary one (dictionary order, effectively random) gives
/// way — that client starts again from a full bucket, which errs towards letting it through.
final class BucketStore: Sendable {
  let spec: RateSpec
  let capacity: Int
  /// A full sweep costs O(keys), so it runs at most this often; in between, evictions take one
  /// arbitrary bucket each.
  private let sweepIntervalNs: UInt64 = 1_000_000_000
  private let state: Mutex<State>

  private struct State: ~Copyable {
    var buckets: [String: TokenBucket] = [:]
    var lastSweepNs: UInt64 = 0
    var swept = false
  }

  init(spec: RateSpec, capacity: Int) {
    self.spec = spec
    self.capacity = max(1, capacity)
    state = Mutex(State())
  }

  var count: Int { state.withLock { $0.buckets.count } }

  func take(_ key: String, nowNs: UInt64) -> RateLimitDecision {
    update(key, nowNs: nowNs) { bucket, spec in bucket.take(spec, nowNs: nowNs) }
  }

  /// Takes `cost` tokens, or `repeatCost` for a repeat of one of the key's last posts
  /// (`fingerprint`): the proof budget, in bytes.
  func take(
    _ key: String, cost: Double, repeatCost: Double, fingerprint: Int, nowNs: UInt64
  ) -> RateLimitDecision {
    update(key, nowNs: nowNs) { bucket, spec in
      bucket.take(
        spec, cost: cost, repeatCost: repeatCost, fingerprint: fingerprint, nowNs: nowNs)
    }
  }

  private func update(
    _ key: String, nowNs: UInt64,
    _ take: (inout TokenBucket, RateSpec) -> RateLimitDecision
  ) -> RateLimitDecision {
    state.withLock { state in
      if var bucket = state.buckets[key] {
        let decision = take(&bucket, spec)
        state.buckets[key] = bucket
        return decision
      }
      if state.buckets.count >= capacity { makeRoom(&state, nowNs: nowNs) }
      var bucket = TokenBucket(spec: spec, nowNs: nowNs)
      let decision = take(&bucket, spec)
      state.buckets[key] = bucket
      return decision
    }
  }

  private func makeRoom(_ state: inout State, nowNs: UInt64) {
    if !state.swept || nowNs &- state.lastSweepNs >= sweepIntervalNs {
      state.swept = true
      state.lastSweepNs = nowNs
      let spec = self.spec
      state.buckets = state.buckets.filter { !$0.value.isIdle(spec, nowNs: nowNs) }
    }
    while state.buckets.count >= capacity, let victim = state.buckets.first?.key {
      state.buckets.removeValue(forKey: victim)
    }
  }
}
