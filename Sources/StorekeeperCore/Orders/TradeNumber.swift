import Digest

#if canImport(Glibc)
  import Glibc
#endif

/// Trade numbers: `yyyyMMddHHmmssSSS` (UTC) followed by 20 characters of [0-9A-Za-z] from the
/// OS CSPRNG (~119 bits). Sortable by creation time, unguessable, unique across instances
/// without coordination, 37 characters of Alipay's `out_trade_no` alphabet.
package enum TradeNumber {
  static let randomLength = 20
  private static let alphabet = Array(
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

  static func make() -> String {
    var random = SecureRandom(words: words)
    return make(using: &random)
  }

  /// The words of randomness one trade number usually takes (a rejected byte may take one
  /// more, drawn when needed).
  static let words = 3

  static func make(using generator: inout some RandomNumberGenerator) -> String {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    var seconds = ts.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    var out: [UInt8] = []
    out.reserveCapacity(17 + randomLength)
    func digits(_ value: Int, _ width: Int) {
      var divisor = 1
      for _ in 1..<width { divisor *= 10 }
      var rest = value
      while divisor > 0 {
        out.append(UInt8(48 + rest / divisor))
        rest %= divisor
        divisor /= 10
      }
    }
    digits(Int(parts.tm_year) + 1900, 4)
    digits(Int(parts.tm_mon) + 1, 2)
    digits(Int(parts.tm_mday), 2)
    digits(Int(parts.tm_hour), 2)
    digits(Int(parts.tm_min), 2)
    digits(Int(parts.tm_sec), 2)
    digits(ts.tv_nsec / 1_000_000, 3)
    // Eight bytes a word (a byte at a time from the kernel was a system call per byte).
    // Rejecting bytes from 248 up keeps it uniform.
    while out.count < 17 + randomLength {
      var word = generator.next()
      for _ in 0..<8 where out.count < 17 + randomLength {
        let byte = UInt8(truncatingIfNeeded: word)
        word >>= 8
        if byte < 248 { out.append(alphabet[Int(byte % 62)]) }
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  package static func isWellFormed(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 64
      && text.utf8.allSatisfy { byte in
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
          || byte == 95
      }
  }
}
