/// JSON string escaping for text assembled by hand (log lines, problem bodies, hot responses),
/// where a full encoder would cost more than the text itself.
public enum JSONString {
  /// Appends `text` to `out` as a quoted, escaped JSON string.
  public static func append(_ text: String, to out: inout String) {
    out += "\""
    if needsNoEscaping(text) {
      out += text
    } else {
      for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{08}": out += "\\b"
        case "\u{0C}": out += "\\f"
        case _ where scalar.value < 0x20: out += controlEscape(UInt8(scalar.value))
        default: out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }

  /// Appends `text` to `out` as the UTF-8 bytes of a quoted, escaped JSON string.
  public static func append(_ text: String, to out: inout [UInt8]) {
    out.append(0x22)
    if needsNoEscaping(text) {
      out.append(contentsOf: text.utf8)
    } else {
      for byte in text.utf8 {
        switch byte {
        case 0x22: out.append(contentsOf: [0x5C, 0x22])
        case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
        case 0x0D: out.append(contentsOf: [0x5C, 0x72])
        case 0x09: out.append(contentsOf: [0x5C, 0x74])
        case 0x08: out.append(contentsOf: [0x5C, 0x62])
        case 0x0C: out.append(contentsOf: [0x5C, 0x66])
        case ..<0x20: out.append(contentsOf: controlEscape(byte).utf8)
        default: out.append(byte)
        }
      }
    }
    out.append(0x22)
  }

  /// Most text (identifiers, timestamps, amounts) has nothing to escape: one scan, one copy.
  private static func needsNoEscaping(_ text: String) -> Bool {
    !text.utf8.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }
  }

  private static func controlEscape(_ byte: UInt8) -> String {
    let hex = String(byte, radix: 16)
    return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
  }
}
