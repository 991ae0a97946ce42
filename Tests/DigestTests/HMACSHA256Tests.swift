import Digest
import Testing

@Suite struct HMACSHA256Tests {
  static func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).map {
      UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0
    }
  }

  // RFC 4231 §4.2–4.7 (test case 5, a truncated output, is left out).
  @Test(arguments: [
    (
      String(repeating: "0b", count: 20), Array("Hi There".utf8),
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    ),
    (
      "4a656665", Array("what do ya want for nothing?".utf8),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ),
    (
      String(repeating: "aa", count: 20), [UInt8](repeating: 0xDD, count: 50),
      "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
    ),
    (
      "0102030405060708090a0b0c0d0e0f10111213141516171819", [UInt8](repeating: 0xCD, count: 50),
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
    ),
    (
      String(repeating: "aa", count: 131),
      Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    ),
    (
      String(repeating: "aa", count: 131),
      Array(
        ("This is a test using a larger than block-size key and a larger than block-size data. "
          + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
    ),
  ])
  func matchesRFC4231(keyHex: String, message: [UInt8], expected: String) {
    let key = Self.bytes(hex: keyHex)
    #expect(Hex.encode(HMACSHA256.mac(key: key, message: message)) == expected)
    #expect(
      message.withUnsafeBytes { Hex.encode(HMACSHA256.mac(key: key, message: $0)) } == expected)
  }

  @Test func anEmptyKeyAndMessageAreValid() {
    // Python's `hmac.new(b"", b"", hashlib.sha256).hexdigest()`.
    let mac = HMACSHA256.mac(key: [], message: [UInt8]())
    #expect(mac.count == HMACSHA256.byteCount)
    #expect(Hex.encode(mac) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
  }

  @Test func aNonContiguousMessageGivesTheSameCode() {
    let message = "what do ya want for nothing?"
    #expect(
      HMACSHA256.mac(key: Array("Jefe".utf8), message: message.utf8.lazy.map { $0 })
        == HMACSHA256.mac(key: Array("Jefe".utf8), message: Array(message.utf8)))
  }
}
