import Synchronization
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Wrong admin tokens per client address: refused after the limit, free again after the window,
/// and never more addresses tracked than the capacity.
@Suite struct AdminFailureLimiterTests {
  final class Clock: Sendable {
    let ms = Mutex<Int64>(1_000)
    func advance(_ delta: Int64) { ms.withLock { $0 += delta } }
    var now: @Sendable () -> Int64 { { [self] in ms.withLock { $0 } } }
  }

  @Test func refusesAnAddressAtTheLimitUntilItsWindowEnds() {
    let clock = Clock()
    let limiter = AdminFailureLimiter(limit: 3, windowMs: 60_000, nowMs: clock.now)
    for _ in 0..<2 { limiter.recordFailure("10.0.0.1") }
    #expect(limiter.retryAfter("10.0.0.1") == nil)
    clock.advance(10_000)
    limiter.recordFailure("10.0.0.1")
    #expect(limiter.retryAfter("10.0.0.1") == 50)
    #expect(limiter.retryAfter("10.0.0.2") == nil, "other addresses are not affected")
    clock.advance(49_500)
    #expect(limiter.retryAfter("10.0.0.1") == 1)
    clock.advance(500)
    #expect(limiter.retryAfter("10.0.0.1") == nil)
    limiter.recordFailure("10.0.0.1")
    #expect(limiter.retryAfter("10.0.0.1") == nil, "a new window starts from one failure")
  }

  @Test func anIPv6ClientCountsAsItsSlash64() {
    let clock = Clock()
    let limiter = AdminFailureLimiter(limit: 3, windowMs: 60_000, nowMs: clock.now)
    for host in ["2001:db8:1:2::1", "2001:db8:1:2::2", "[2001:db8:1:2:ffff::3]"] {
      limiter.recordFailure(host)
    }
    #expect(limiter.retryAfter("2001:db8:1:2::99") == 60)
    #expect(limiter.retryAfter("2001:db8:1:3::1") == nil, "the next /64 is someone else")
    #expect(limiter.trackedCount == 1)
  }

  @Test func failuresSpreadOverWindowsNeverAddUp() {
    let clock = Clock()
    let limiter = AdminFailureLimiter(limit: 3, windowMs: 1_000, nowMs: clock.now)
    for _ in 0..<10 {
      limiter.recordFailure("10.0.0.1")
      limiter.recordFailure("10.0.0.1")
      clock.advance(1_000)
    }
    #expect(limiter.retryAfter("10.0.0.1") == nil)
  }

  @Test func tracksAtMostItsCapacity() {
    let clock = Clock()
    let limiter = AdminFailureLimiter(limit: 2, windowMs: 60_000, capacity: 100, nowMs: clock.now)
    limiter.recordFailure("blocked")
    limiter.recordFailure("blocked")
    for index in 0..<99 {
      limiter.recordFailure("10.1.\(index / 256).\(index % 256)")
    }
    #expect(limiter.trackedCount == 100)
    #expect(limiter.retryAfter("blocked") != nil)
    clock.advance(1)
    for index in 0..<1_000 {
      limiter.recordFailure("10.2.\(index / 256).\(index % 256)")
      clock.advance(1)
    }
    #expect(limiter.trackedCount == 100)
  }

  @Test func aRefusedAddressIsRefusedOnlyItsWrongTokens() {
    let clock = Clock()
    let limiter = AdminFailureLimiter(limit: 2, windowMs: 60_000, nowMs: clock.now)
    #expect(limiter.judge("10.0.0.1", rightToken: false) == nil)
    #expect(limiter.judge("10.0.0.1", rightToken: false) == nil)
    #expect(limiter.retryAfter("10.0.0.1") == 60)
    #expect(limiter.judge("10.0.0.1", rightToken: true) == nil, "the right token is served")
    clock.advance(30_000)
    #expect(limiter.judge("10.0.0.1", rightToken: false) == 30, "a wrong one is refused")
    #expect(limiter.judge("10.0.0.1", rightToken: true) == nil)
    #expect(limiter.judge("10.0.0.2", rightToken: false) == nil, "other addresses go on")
    clock.advance(30_000)
    #expect(limiter.judge("10.0.0.1", rightToken: false) == nil, "a new window")
  }
}
