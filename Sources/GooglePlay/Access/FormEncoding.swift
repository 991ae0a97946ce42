/// `application/x-www-form-urlencoded` (WHATWG URL §5.2): every byte but the unreserved set
/// percent-encoded, so a `+` or `=` in a value can never be read as a separator.
enum FormEncoding {
  static func encode(_ pairs: [(String, String)]) -> String {
    pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
  }

  static func escape(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"), UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    return out
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
