import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct RateLimitTests {
  static let second: UInt64 = 1_000_000_000

  @Test func readsRatesWithAndWithoutBurst() throws {
    #expect(try RateSpec.parse("10/s") == RateSpec(perSecond: 10, burst: 10))
    #expect(try RateSpec.parse("30/min,burst=5") == RateSpec(perSecond: 0.5, burst: 5))
    #expect(try RateSpec.parse(" 3600/h , burst=100 ") == RateSpec(perSecond: 1, burst: 100))
    #expect(try RateSpec.parse("off") == nil)
    for bad in ["", "10", "10/day", "0/s", "-1/s", "10/s,burst=0", "10/s,5", "x/s"] {
      #expect(throws: RateSpec.ParseFailure.self) { try RateSpec.parse(bad) }
    }
  }

  @Test func aBucketLetsABurstThroughThenRefusesUntilItRefills() {
    let spec = RateSpec(perSecond: 1, burst: 3)
    var bucket = TokenBucket(spec: spec, nowNs: 0)
    let remaining = (0..<3).map { _ in bucket.take(spec, nowNs: 0) }
    #expect(remaining.map(\.allowed) == [true, true, true])
    #expect(remaining.map(\.remaining) == [2, 1, 0])
    #expect(remaining.last?.resetSeconds == 3)
    let refused = bucket.take(spec, nowNs: 0)
    #expect(!refused.allowed && refused.retryAfterSeconds == 1 && refused.limit == 3)
    #expect(bucket.take(spec, nowNs: Self.second).allowed)
    #expect(!bucket.take(spec, nowNs: Self.second).allowed)
  }

  @Test func theStoreTracksAtMostItsCapacityOfKeys() {
    let store = BucketStore(spec: RateSpec(perSecond: 1, burst: 5), capacity: 1000)
    for i in 0..<50_000 {
      _ = store.take("client-\(i)", nowNs: UInt64(i) * 1000)
      if i % 10_000 == 0 { #expect(store.count <= 1000) }
    }
    #expect(store.count <= 1000)
  }

  @Test func idleBucketsGoFirstSoABusyClientKeepsItsLimit() {
    let store = BucketStore(spec: RateSpec(perSecond: 1, burst: 2), capacity: 10)
    for i in 0..<9 { _ = store.take("quiet-\(i)", nowNs: 0) }
    let later = 100 * Self.second
    _ = store.take("hot", nowNs: later)
    _ = store.take("hot", nowNs: later)
    #expect(!store.take("hot", nowNs: later).allowed)
    // Past the cap: the quiet buckets have refilled and are dropped, the hot one stays empty.
    for i in 0..<5 { _ = store.take("new-\(i)", nowNs: later) }
    #expect(store.count <= 10)
    #expect(!store.take("hot", nowNs: later).allowed)
  }

  @Test func ipv6ClientsShareTheirSlash64() {
    #expect(
      RateLimiter.addressKey("2001:db8:1:2::1") == RateLimiter.addressKey("2001:db8:1:2:ffff::9"))
    #expect(RateLimiter.addressKey("2001:db8:1:2::1") != RateLimiter.addressKey("2001:db8:1:3::1"))
    #expect(RateLimiter.addressKey("10.1.2.3") == "10.1.2.3")
  }

  @Test func theTighterBucketIsReported() {
    let roomy = RateLimitDecision(
      allowed: true, limit: 500, remaining: 400, resetSeconds: 2, retryAfterSeconds: 1)
    let tight = RateLimitDecision(
      allowed: true, limit: 10, remaining: 3, resetSeconds: 14, retryAfterSeconds: 1)
    var refused = tight
    refused.allowed = false
    #expect(roomy.tighter(tight) == tight && tight.tighter(roomy) == tight)
    #expect(roomy.tighter(refused) == refused)
  }
}
