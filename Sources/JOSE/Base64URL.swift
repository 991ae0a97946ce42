import Foundation

/// Strict base64 (RFC 4648) over bytes, for the JWS hot path.
///
/// Strict on purpose: a character outside the alphabet, a misplaced `=` or non-zero unused
/// bits in the last character is refused, so one token has exactly one encoding and no byte of
/// it can change without changing what it decodes to.
public enum Base64URL {
  /// base64url without padding (JWS segments).
  public static func decode<Bytes: Collection>(_ text: Bytes) -> [UInt8]?
  where Bytes.Element == UInt8 {
    decode(text, urlSafe: true)
  }

  public static func decode(_ text: Substring) -> [UInt8]? { decode(text.utf8, urlSafe: true) }

  /// Standard base64, padding optional (x5c certificates).
  public static func decodeStandard(_ text: String) -> [UInt8]? {
    decode(text.utf8, urlSafe: false)
  }

  static func decode<Bytes: Collection>(_ text: Bytes, urlSafe: Bool) -> [UInt8]?
  where Bytes.Element == UInt8 {
    if let result = text.withContiguousStorageIfAvailable({ decode($0, urlSafe: urlSafe) }) {
      return result
    }
    return Array(text).withUnsafeBufferPointer { decode($0, urlSafe: urlSafe) }
  }

  private static func decode(_ input: UnsafeBufferPointer<UInt8>, urlSafe: Bool) -> [UInt8]? {
    var count = input.count
    if !urlSafe, count % 4 == 0, count > 0, input[count - 1] == UInt8(ascii: "=") {
      count -= input[count - 2] == UInt8(ascii: "=") ? 2 : 1
    }
    guard count > 0, count % 4 != 1 else { return nil }
    let table = urlSafe ? urlTable : standardTable
    let fullGroups = count / 4
    let tail = count % 4
    let outputCount = fullGroups * 3 + (tail == 0 ? 0 : tail - 1)
    return table.withUnsafeBufferPointer { table -> [UInt8]? in
      var valid = true
      let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
        var combined: UInt8 = 0  // any invalid character sets the high bit
        var i = 0
        var o = 0
        for _ in 0..<fullGroups {
          let a = table[Int(input[i])]
          let b = table[Int(input[i + 1])]
          let c = table[Int(input[i + 2])]
          let d = table[Int(input[i + 3])]
          combined |= a | b | c | d
          let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
          out[o] = UInt8(truncatingIfNeeded: word >> 16)
          out[o + 1] = UInt8(truncatingIfNeeded: word >> 8)
          out[o + 2] = UInt8(truncatingIfNeeded: word)
          i += 4
          o += 3
        }
        if tail >= 2 {
          let a = table[Int(input[i])]
          let b = table[Int(input[i + 1])]
          let c = tail == 3 ? table[Int(input[i + 2])] : 0
          combined |= a | b | c
          let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
          out[o] = UInt8(truncatingIfNeeded: word >> 16)
          // Unused low bits of the last character must be zero (one encoding per value).
          if tail == 2 {
            valid = word & 0xFFFF == 0
          } else {
            out[o + 1] = UInt8(truncatingIfNeeded: word >> 8)
            valid = word & 0xFF == 0
          }
        }
        valid = valid && combined & 0x80 == 0
        initialized = outputCount
      }
      return valid ? output : nil
    }
  }

  public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String
  where Bytes.Element == UInt8 {
    var text = Data(bytes).base64EncodedString()
    while text.hasSuffix("=") { text.removeLast() }
    return String(
      text.map { character -> Character in
        switch character {
        case "+": "-"
        case "/": "_"
        default: character
        }
      })
  }

  private static let invalid: UInt8 = 0x80
  private static let standardTable = table(extra: ("+", "/"))
  private static let urlTable = table(extra: ("-", "_"))

  private static func table(extra: (Unicode.Scalar, Unicode.Scalar)) -> [UInt8] {
    var table = [UInt8](repeating: invalid, count: 256)
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
    table[Int(extra.0.value)] = 62
    table[Int(extra.1.value)] = 63
    return table
  }
}
