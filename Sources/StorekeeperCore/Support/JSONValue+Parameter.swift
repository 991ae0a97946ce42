extension JSONValue {
  /// The value as JSON text for a parameter cast to `jsonb`, written directly rather than
  /// through Foundation's `JSONEncoder` (a report's statements bind several; the encoder's
  /// set-up and generic containers cost more than the writing). PostgreSQL reparses it, so only
  /// validity matters, not the encoder's spacing or key order. A number is written as its
  /// text, which is JSON whenever it came from `JSONParser` or from an integer.
  package var parameterText: String {
    var out: [UInt8] = []
    write(into: &out)
    return String(decoding: out, as: UTF8.self)
  }

  private func write(into out: inout [UInt8]) {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .number(let text): out.append(contentsOf: text.utf8)
    case .string(let text): Self.write(string: text, into: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        value.write(into: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        Self.write(string: key, into: &out)
        out.append(UInt8(ascii: ":"))
        value.write(into: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }

  /// RFC 8259's escapes: the quote, the backslash and the control characters; everything else
  /// as its UTF-8.
  private static func write(string: String, into out: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    out.append(UInt8(ascii: "\""))
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        out.append(UInt8(ascii: "\\"))
        out.append(byte)
      case 0..<0x20:
        out.append(contentsOf: "\\u00".utf8)
        out.append(hex[Int(byte >> 4)])
        out.append(hex[Int(byte & 0x0f)])
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
  }
}
