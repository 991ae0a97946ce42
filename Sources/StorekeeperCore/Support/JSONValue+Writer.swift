import StorekeeperLogging

/// JSON text written directly rather than through Foundation's `JSONEncoder`, whose set-up and
/// generic containers cost more than the writing on the settlement's path. One walk serves the
/// two readers: PostgreSQL (`parameterText`) and a client expecting the encoder's bytes
/// (`appendSortedJSON`).
extension JSONValue {
  /// The value as JSON text for a parameter cast to `jsonb`. PostgreSQL reparses it, so only
  /// validity matters, not the encoder's spacing or key order. A number is written as its
  /// text, which is JSON whenever it came from `JSONParser` or from an integer.
  package var parameterText: String {
    var out: [UInt8] = []
    append(to: &out, sortingKeys: false) { text, out in out.append(contentsOf: text.utf8) }
    return String(decoding: out, as: UTF8.self)
  }

  /// Appends the JSON `JSONCoding` makes of this value: keys sorted, a number as the `Int64`
  /// it is, else as Foundation writes the `Decimal` or the `Double` (which throws for a number
  /// no `Double` can hold, as the encoder does).
  package func appendSortedJSON(to out: inout [UInt8]) throws {
    try append(to: &out, sortingKeys: true) { text, out in
      if let value = Int64(text) {
        out.append(contentsOf: String(value).utf8)
      } else if let value = Self.decimal(text) {
        out.append(contentsOf: try JSONCoding.encode(value))
      } else {
        out.append(contentsOf: try JSONCoding.encode(Double(text) ?? 0))
      }
    }
  }

  private func append(
    to out: inout [UInt8], sortingKeys: Bool,
    number: (String, inout [UInt8]) throws -> Void
  ) rethrows {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .number(let text): try number(text, &out)
    case .string(let text): JSONString.append(text, to: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        try value.append(to: &out, sortingKeys: sortingKeys, number: number)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      let keys = sortingKeys ? members.keys.sorted() : Array(members.keys)
      for (index, key) in keys.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONString.append(key, to: &out)
        out.append(UInt8(ascii: ":"))
        try members[key]?.append(to: &out, sortingKeys: sortingKeys, number: number)
      }
      out.append(UInt8(ascii: "}"))
    }
  }
}
