import Testing

@testable import StorekeeperCore

@Suite struct RetryPolicyTests {
  static let hour: Int64 = 3_600_000

  /// Attempt times (ms after the first) until the policy gives up.
  static func schedule(_ policy: RetryPolicy) -> [Int64] {
    var times: [Int64] = [0]
    var attempt = 1
    while case .retry(let next) = policy.decision(
      afterAttempt: attempt, firstAttemptMs: 0, nowMs: times[times.count - 1])
    {
      times.append(next)
      attempt += 1
      if attempt > 10_000 { break }
    }
    return times
  }

  @Test func withTheDefaultsTheLastAttemptComesBetween71And72HoursAfterTheFirst() throws {
    let times = Self.schedule(RetryPolicy(baseMs: 30_000, windowMs: 72 * Self.hour))
    let last = try #require(times.last)
    #expect(last > 71 * Self.hour && last <= 72 * Self.hour, "last attempt at \(last) ms")
    // Doubling from 30 s, then hourly.
    #expect(Array(times.prefix(4)) == [0, 30_000, 90_000, 210_000])
    let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
    #expect(gaps.max() == Self.hour)
    #expect(gaps == gaps.sorted())
  }

  @Test func aCustomBaseAndWindowAreHonoured() throws {
    let policy = RetryPolicy(baseMs: 1_000, windowMs: 10_000)
    #expect(Self.schedule(policy) == [0, 1_000, 3_000, 7_000])
    let capped = RetryPolicy(baseMs: 1_000, capMs: 2_000, windowMs: 9_000)
    #expect(Self.schedule(capped) == [0, 1_000, 3_000, 5_000, 7_000, 9_000])
  }

  @Test func theDelayDoublesUpToTheCapAndNeverOverflows() {
    let policy = RetryPolicy(baseMs: 30_000, windowMs: 72 * Self.hour)
    #expect(policy.delayMs(afterAttempt: 1) == 30_000)
    #expect(policy.delayMs(afterAttempt: 2) == 60_000)
    #expect(policy.delayMs(afterAttempt: 8) == Self.hour)
    #expect(policy.delayMs(afterAttempt: 1_000_000) == Self.hour)
  }

  @Test func givingUpIsDecidedAgainstTheFirstAttemptNotTheLast() {
    let policy = RetryPolicy(baseMs: 30_000, windowMs: 72 * Self.hour)
    #expect(
      policy.decision(afterAttempt: 80, firstAttemptMs: 0, nowMs: 71 * Self.hour + 1)
        == .giveUp)
    #expect(
      policy.decision(afterAttempt: 80, firstAttemptMs: 0, nowMs: 70 * Self.hour)
        == .retry(atMs: 71 * Self.hour))
  }
}
