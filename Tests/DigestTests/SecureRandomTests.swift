import Testing

@testable import Digest

struct SecureRandomTests {
  /// Words keep coming past the first draw, none repeated and none zero (a refill that failed
  /// silently would hand out the buffer again or its zeros).
  @Test func drawsFreshWordsPastEachRefill() {
    var random = SecureRandom(words: 4)
    let words = (0..<40).map { _ in random.next() }
    #expect(Set(words).count == 40)
    #expect(!words.contains(0))
  }

  /// Two generators do not share a stream.
  @Test func twoGeneratorsDrawDifferentWords() {
    var a = SecureRandom(words: 8)
    var b = SecureRandom(words: 8)
    let first = (0..<8).map { _ in a.next() }
    let second = (0..<8).map { _ in b.next() }
    #expect(Set(first).isDisjoint(with: second))
  }
}
