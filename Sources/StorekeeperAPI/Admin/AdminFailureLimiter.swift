import Synchronization

/// Counts wrong admin tokens per client address in fixed windows: the `limit`-th failure
/// within `windowMs` of an address's first one refuses that address's wrong tokens (429, not
/// 401) until the window ends; its right ones are never refused (`judge`).
/// At most `capacity` addresses are tracked; when full, finished windows are dropped first,
/// then the oldest, so a flood of addresses costs bounded memory (at worst it evicts a
/// blocked address early).
package final class AdminFailureLimiter: Sendable {
  private struct Window {
    var startMs: Int64
    var failures: Int
  }

  let limit: Int
  let windowMs: Int64
  let capacity: Int
  private let nowMs: @Sendable () -> Int64
  private let windows = Mutex<[String: Window]>([:])

  package init(
    limit: Int, windowMs: Int64, capacity: Int = 10_000,
    nowMs: @escaping @Sendable () -> Int64 = AdminFailureLimiter.monotonicMs
  ) {
    self.limit = max(1, limit)
    self.windowMs = max(1, windowMs)
    self.capacity = max(1, capacity)
    self.nowMs = nowMs
  }

  /// Milliseconds since this process's clock began; never jumps with the wall clock.
  @Sendable static func monotonicMs() -> Int64 {
    let elapsed = ContinuousClock.now - start
    return elapsed.components.seconds * 1000 + elapsed.components.attoseconds
      / 1_000_000_000_000_000
  }
  private static let start = ContinuousClock.now

  /// The decision for one presented token: nil to go on (a right token always, whatever its
  /// address did; a wrong one then gets its 401), or the seconds of the 429 for a wrong token
  /// from a refused address. Only wrong tokens are refused, so others sharing the admin's
  /// address cannot lock the admin out; every wrong token counts, refused or not.
  func judge(_ address: String, rightToken: Bool) -> Int? {
    guard !rightToken else { return nil }
    let refused = retryAfter(address)
    recordFailure(address)
    return refused
  }

  /// Whole seconds until `address` may present a wrong token without a 429, or nil when it is
  /// not refused.
  func retryAfter(_ address: String) -> Int? {
    let now = nowMs()
    let address = RateLimiter.addressKey(address)
    return windows.withLock { windows in
      guard let window = windows[address] else { return nil }
      let end = window.startMs + windowMs
      if now >= end {
        windows[address] = nil
        return nil
      }
      guard window.failures >= limit else { return nil }
      return Int((end - now + 999) / 1000)
    }
  }

  /// Records one failure of `address`: of its /64 for IPv6 (`RateLimiter.addressKey`), as the
  /// rate limits count it, so walking through one's own prefix gains no guesses.
  func recordFailure(_ address: String) {
    let now = nowMs()
    let address = RateLimiter.addressKey(address)
    windows.withLock { windows in
      if var window = windows[address], now < window.startMs + windowMs {
        window.failures += 1
        windows[address] = window
        return
      }
      if windows[address] == nil, windows.count >= capacity {
        windows = windows.filter { now < $0.value.startMs + windowMs }
        if windows.count >= capacity,
          let oldest = windows.min(by: { $0.value.startMs < $1.value.startMs })?.key
        {
          windows[oldest] = nil
        }
      }
      windows[address] = Window(startMs: now, failures: 1)
    }
  }

  /// How many addresses are tracked (for tests of the bound).
  var trackedCount: Int { windows.withLock { $0.count } }
}
