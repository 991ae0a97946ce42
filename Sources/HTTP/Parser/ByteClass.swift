/// Character classes of RFC 9110 §5.6, as lookup tables.
enum ByteClass {
  static let cr = UInt8(ascii: "\r")
  static let lf = UInt8(ascii: "\n")
  static let space = UInt8(ascii: " ")
  static let tab = UInt8(ascii: "\t")
  static let colon = UInt8(ascii: ":")

  /// tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" /
  /// "~" / DIGIT / ALPHA
  static let token: [Bool] = {
    var table = [Bool](repeating: false, count: 256)
    for c in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(c)] = true }
    for c in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(c)] = true }
    for c in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(c)] = true }
    for c in "!#$%&'*+-.^_`|~".utf8 { table[Int(c)] = true }
    return table
  }()

  static func isToken(_ c: UInt8) -> Bool { token[Int(c)] }

  /// field-vchar / SP / HTAB: anything but controls and DEL.
  static func isFieldValue(_ c: UInt8) -> Bool { c >= 0x20 ? c != 0x7F : c == tab }

  /// Bytes allowed in a request-target: visible ASCII.
  static func isTarget(_ c: UInt8) -> Bool { c > 0x20 && c < 0x7F }

  static func isWhitespace(_ c: UInt8) -> Bool { c == space || c == tab }

  static func hexValue(_ c: UInt8) -> Int? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(c - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(c - UInt8(ascii: "a")) + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(c - UInt8(ascii: "A")) + 10
    default: nil
    }
  }

  /// ASCII case-insensitive comparison of raw bytes with a lowercase literal.
  static func equalsLowercase(_ bytes: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
    guard bytes.count == lower.utf8CodeUnitCount else { return false }
    let literal = lower.utf8Start
    for i in 0..<bytes.count {
      let l = literal[i]
      let isLetter = l >= UInt8(ascii: "a") && l <= UInt8(ascii: "z")
      if (isLetter ? bytes[i] | 0x20 : bytes[i]) != l { return false }
    }
    return true
  }
}
