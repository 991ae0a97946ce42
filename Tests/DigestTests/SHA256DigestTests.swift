import Digest
import Foundation
import Testing

@Suite struct SHA256DigestTests {
  // FIPS 180-4 / NIST example vectors.
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    (
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
    ),
    (
      "The quick brown fox jumps over the lazy dog",
      "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
    ),
  ])
  func matchesKnownVectors(input: String, expected: String) {
    #expect(SHA256Digest.hex(input) == expected)
    #expect(SHA256Digest.hex(Array(input.utf8)) == expected)
    #expect(Hex.encode(SHA256Digest.hash(input)) == expected)
  }

  @Test func paddingBoundariesMatchLengthsAroundOneBlock() {
    // 55, 56 and 64 bytes straddle the length field; digests from `sha256sum`.
    #expect(
      SHA256Digest.hex(Array(repeating: UInt8(ascii: "a"), count: 55))
        == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
    #expect(
      SHA256Digest.hex(Array(repeating: UInt8(ascii: "a"), count: 56))
        == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
    #expect(
      SHA256Digest.hex(Array(repeating: UInt8(ascii: "a"), count: 64))
        == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
  }

  @Test func everyKindOfInputGivesTheSameDigest() {
    let text = "abc"
    let expected = SHA256Digest.hash(Array(text.utf8))
    #expect(expected.count == SHA256Digest.byteCount)
    #expect(SHA256Digest.hash(text) == expected)
    #expect(SHA256Digest.hash(Data(text.utf8)) == expected)
    #expect(SHA256Digest.hash("xabcx".dropFirst().dropLast()) == expected, "a Substring")
    #expect(SHA256Digest.hash(Array("xabc".utf8).dropFirst()) == expected, "an ArraySlice")
    #expect(SHA256Digest.hash(text.utf8.lazy.map { $0 }) == expected, "a non-contiguous sequence")
    #expect(Array(text.utf8).withUnsafeBytes { SHA256Digest.hash($0) } == expected)
    #expect(SHA256Digest.hex(Data()) == SHA256Digest.hex(""))
  }

  @Test func hexIsTwoLowercaseDigitsPerByte() {
    #expect(Hex.encode([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
    #expect(Hex.encode([UInt8]()) == "")
  }
}
