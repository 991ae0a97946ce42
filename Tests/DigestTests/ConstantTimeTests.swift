import Digest
import Testing

@Suite struct ConstantTimeTests {
  @Test func equalBytesAreEqual() {
    #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
    #expect(ConstantTime.equals(Array("secret-token".utf8), Array("secret-token".utf8)))
    #expect(ConstantTime.equals([], []))
  }

  @Test func anyDifferentByteMakesThemDifferent() {
    #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
    #expect(!ConstantTime.equals([0, 2, 3], [1, 2, 3]))
    #expect(!ConstantTime.equals(Array("secret-token".utf8), Array("secret-tokeN".utf8)))
  }

  @Test func differentLengthsAreNeverEqual() {
    // A zero byte past the end is still a difference: the lengths count.
    #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 3, 0]))
    #expect(!ConstantTime.equals([1, 2, 3, 0], [1, 2, 3]))
    #expect(!ConstantTime.equals(Array("secret".utf8), Array("secret-token".utf8)))
    #expect(!ConstantTime.equals([], Array("x".utf8)))
    #expect(!ConstantTime.equals([0], []))
  }
}
