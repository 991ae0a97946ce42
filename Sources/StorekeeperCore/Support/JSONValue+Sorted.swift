import StorekeeperLogging

extension JSONValue {
  /// Appends the JSON `JSONCoding` makes of this value, written directly: keys sorted, a
  /// number as the `Int64` it is, else as Foundation writes the `Double` (which throws for a
  /// number no `Double` can hold, as the encoder does).
  package func appendSortedJSON(to out: inout [UInt8]) throws {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .number(let text):
      if let value = Int64(text) {
        out.append(contentsOf: String(value).utf8)
      } else {
        out.append(contentsOf: try JSONCoding.encode(Double(text) ?? 0))
      }
    case .string(let text): JSONString.append(text, to: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        try value.appendSortedJSON(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONString.append(key, to: &out)
        out.append(UInt8(ascii: ":"))
        try members[key]?.appendSortedJSON(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }
}
