import Testing

@testable import StorekeeperCore

@Suite struct ExperimentAssignmentTests {
  private func shares(_ weights: [Int], users: Int = 100_000, experiment: String = "exp-1")
    -> [Double]
  {
    let variants = weights.enumerated().map {
      ExperimentVariant(variant: "v\($0.offset)", offeringId: "o\($0.offset)", weight: $0.element)
    }
    var counts = [Int](repeating: 0, count: weights.count)
    for user in 0..<users {
      guard
        let chosen = ExperimentAssignment.variant(
          experimentId: experiment, userId: "user-\(user)", variants: variants),
        let index = variants.firstIndex(of: chosen)
      else { continue }
      counts[index] += 1
    }
    return counts.map { Double($0) / Double(users) }
  }

  @Test func aFiftyFiftySplitLandsWithinOnePercent() {
    let split = shares([50, 50])
    #expect(abs(split[0] - 0.5) < 0.01, "\(split)")
    #expect(abs(split[1] - 0.5) < 0.01, "\(split)")
  }

  @Test func aTenNinetySplitLandsWithinOnePercent() {
    let split = shares([10, 90], experiment: "price-test")
    #expect(abs(split[0] - 0.1) < 0.01, "\(split)")
    #expect(abs(split[1] - 0.9) < 0.01, "\(split)")
  }

  @Test func fourWaysByWeight() {
    let split = shares([1, 2, 3, 4], experiment: "four")
    for (share, expected) in zip(split, [0.1, 0.2, 0.3, 0.4]) {
      #expect(abs(share - expected) < 0.01, "\(split)")
    }
  }

  @Test func theSameUserAlwaysGetsTheSameVariantAndExperimentsAreIndependent() {
    let variants = [
      ExperimentVariant(variant: "a", offeringId: "x", weight: 1),
      ExperimentVariant(variant: "b", offeringId: "y", weight: 1),
    ]
    let first = (0..<1000).map {
      ExperimentAssignment.variant(experimentId: "e1", userId: "u\($0)", variants: variants)
    }
    let again = (0..<1000).map {
      ExperimentAssignment.variant(experimentId: "e1", userId: "u\($0)", variants: variants)
    }
    let other = (0..<1000).map {
      ExperimentAssignment.variant(experimentId: "e2", userId: "u\($0)", variants: variants)
    }
    #expect(first == again)
    // Another experiment reshuffles: about half the users land elsewhere.
    let moved = zip(first, other).filter { $0 != $1 }.count
    #expect((400...600).contains(moved), "\(moved)")
  }

  @Test func theBucketIsTheFirstEightBytesOfSHA256() {
    // int.from_bytes(hashlib.sha256(b"exp\nuser").digest()[:8], "big"), computed in Python.
    #expect(
      ExperimentAssignment.bucket(experimentId: "exp", userId: "user") == 10_082_825_706_543_001_498
    )
  }

  @Test func theExposureKeyIsTheFirstSixteenBytesOfTheSameDigest() {
    // int.from_bytes(digest[8:16], "big") of the same digests, computed in Python.
    #expect(
      ExperimentAssignment.key(experimentId: "exp", userId: "user")
        == ExposureKey(bucket: 10_082_825_706_543_001_498, rest: 14_488_307_844_563_650_590))
    // Byte for byte, as PostgreSQL keys the exposure: two spellings that Swift's `String`
    // calls equal are two users, with two keys.
    #expect(
      ExperimentAssignment.key(experimentId: "e", userId: "jose\u{301}")
        == ExposureKey(bucket: 2_187_261_508_883_923_450, rest: 7_529_133_846_832_441_990))
    #expect(
      ExperimentAssignment.key(experimentId: "e", userId: "jos\u{e9}")
        == ExposureKey(bucket: 9_124_162_467_072_324_788, rest: 14_203_149_884_503_931_185))
  }

  @Test func wilsonIntervalsAreBoundedAndContainTheRate() {
    let none = VariantResult.wilson(successes: 0, trials: 10)
    #expect(none.low == 0 && none.high > 0.2 && none.high < 0.35)
    let half = VariantResult.wilson(successes: 50, trials: 100)
    #expect(abs(half.low - 0.4038) < 0.001 && abs(half.high - 0.5962) < 0.001)
    #expect(VariantResult.wilson(successes: 0, trials: 0) == (0, 0))
    let all = VariantResult.wilson(successes: 10, trials: 10)
    #expect(abs(all.high - 1) < 1e-9 && abs(all.low - 0.7225) < 0.001)
  }
}
