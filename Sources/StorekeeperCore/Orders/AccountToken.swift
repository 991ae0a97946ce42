import Digest

/// The `app_account_token` of a new order: a random (version 4) UUID in lowercase, two words
/// of a CSPRNG. Foundation's `UUID()` opens and reads /dev/urandom each time, which a profile
/// of order creation showed at several percent of the process's CPU.
package enum AccountToken {
  package static func make() -> String {
    var random = SecureRandom(words: words)
    return make(using: &random)
  }

  /// The words of randomness one token takes.
  static let words = 2

  static func make(using generator: inout some RandomNumberGenerator) -> String {
    var bytes = [UInt8](repeating: 0, count: 16)
    for half in 0..<2 {
      var word = generator.next()
      for i in 0..<8 {
        bytes[half * 8 + i] = UInt8(truncatingIfNeeded: word)
        word >>= 8
      }
    }
    bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
    bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
    let hex = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(36)
    for (index, byte) in bytes.enumerated() {
      if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
      out.append(hex[Int(byte >> 4)])
      out.append(hex[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// `text` as a token this server can store (a UUID, 8-4-4-4-12 hex digits of either case),
  /// lowercased; nil for anything else, which a `uuid` column would refuse.
  package static func normalized(_ text: String?) -> String? {
    guard let text else { return nil }
    let bytes = Array(text.utf8)
    guard bytes.count == 36 else { return nil }
    for (index, byte) in bytes.enumerated() {
      let isDash = byte == UInt8(ascii: "-")
      let isHex =
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
      guard [8, 13, 18, 23].contains(index) ? isDash : isHex else { return nil }
    }
    return text.lowercased()
  }
}
