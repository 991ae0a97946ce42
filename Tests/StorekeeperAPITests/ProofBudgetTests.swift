import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Issue 22's per-user proof budget (`PROOF_BYTES_PER_USER`): bytes per user, each post at
/// least `RateLimiter.minimumProofCost`, an exact repeat only that minimum.
@Suite struct ProofBudgetTests {
  static let second: UInt64 = 1_000_000_000

  final class Clock: @unchecked Sendable {
    var nowNs: UInt64 = 1
  }

  static func limiter(_ spec: String = "16MB/h", clock: Clock = Clock()) throws -> RateLimiter {
    RateLimiter(
      perAddress: nil, perUser: nil, proofBytesPerUser: try RateSpec.parse(spec, sizes: true),
      maxKeys: 1000, clientAddress: ClientAddress(trustedProxies: []), nowNs: { clock.nowNs })
  }

  static func junk(_ size: Int, _ seed: UInt8) -> [UInt8] {
    var body = [UInt8](repeating: 0x41, count: size)
    body[0] = seed
    body[size - 1] = seed &+ 1
    return body
  }

  @Test func readsAmountsOfBytes() throws {
    #expect(
      try RateSpec.parse("16MB/h", sizes: true)
        == RateSpec(perSecond: 16_000_000 / 3600, burst: 16_000_000))
    #expect(
      try RateSpec.parse("500KB/min,burst=2MB", sizes: true)
        == RateSpec(perSecond: 500_000 / 60, burst: 2_000_000))
    #expect(try RateSpec.parse("1GB/h", sizes: true)?.burst == 1_000_000_000)
    #expect(try RateSpec.parse("off", sizes: true) == nil)
    for bad in ["16TB/h", "0MB/h", "MB/h", "16MB", "16MB/h,burst=0KB", "9223372036854775807GB/h"] {
      #expect(throws: RateSpec.ParseFailure.self) { try RateSpec.parse(bad, sizes: true) }
    }
    // Sizes only where a budget of bytes is read.
    #expect(throws: RateSpec.ParseFailure.self) { try RateSpec.parse("16MB/h") }
  }

  @Test func aCostAboveTheBurstPassesFromAFullBucketAndWaitsForAllOfIt() {
    let spec = RateSpec(perSecond: 10, burst: 100)
    var bucket = TokenBucket(spec: spec, nowNs: 0)
    #expect(bucket.take(spec, cost: 500, nowNs: 0).allowed)
    let refused = bucket.take(spec, cost: 50, nowNs: 0)
    #expect(!refused.allowed && refused.retryAfterSeconds == 5)
    #expect(bucket.take(spec, cost: 50, nowNs: 5 * Self.second).allowed)
  }

  @Test func aFloodOfBigJunkReceiptsIsRefusedPastTheBudgetAndOthersGoOn() throws {
    let limiter = try Self.limiter()
    let allowed = (0..<60).filter { i in
      limiter.takeProof(userId: "mallory", body: Self.junk(933_000, UInt8(i)))?.allowed == true
    }
    // 16 MB holds 17 posts of 933 KB, and nothing refills while the clock stands still.
    #expect(allowed.count == 17 && allowed == Array(0..<17))
    let refused = limiter.takeProof(userId: "mallory", body: Self.junk(933_000, 200))
    #expect(refused?.limit == 16_000_000 && (refused?.retryAfterSeconds ?? 0) >= 1)
    #expect(limiter.takeProof(userId: "trent", body: Self.junk(933_000, 1))?.allowed == true)
  }

  @Test func tinyPostsCountAtLeastTheMinimumSoTheirNumberIsBoundedToo() throws {
    let clock = Clock()
    let limiter = try Self.limiter(clock: clock)
    let allowed = (0..<400).filter { i in
      let body = Array("{\"n\":\(i)}".utf8)
      return limiter.takeProof(userId: "mallory", body: body)?.allowed == true
    }
    #expect(allowed.count == 16_000_000 / RateLimiter.minimumProofCost)
    // One more post's worth refills in 64 KB / (16 MB / h) = 14.4 s.
    clock.nowNs += 15 * Self.second
    #expect(limiter.takeProof(userId: "mallory", body: Array("{}".utf8))?.allowed == true)
  }

  /// A real client: a report of its largest receipt, retried many times at once (a burst of
  /// identical reports), then restores posting two other receipts. None of it is refused.
  @Test func aUsersReportRetriesAndRestoresAreNeverRefused() throws {
    let limiter = try Self.limiter()
    let report = Self.junk(1_000_000, 1)
    let reports = (0..<100).map { _ in limiter.takeProof(userId: "alice", body: report) }
    #expect(reports.allSatisfy { $0?.allowed == true })
    for seed in [2, 3] as [UInt8] {
      #expect(
        limiter.takeProof(userId: "alice", body: Self.junk(400_000, seed))?.allowed == true)
    }
  }

  @Test func offSpendsNothing() throws {
    let limiter = try Self.limiter("off")
    #expect(limiter.takeProof(userId: "mallory", body: Self.junk(933_000, 1)) == nil)
  }
}
