import Postgres

/// Any JSON value, kept as it came: product `content` is opaque to Storekeeper and delivered
/// to the app exactly as an admin stored it.
public enum JSONValue: Sendable, Equatable, Codable {
  case null
  case bool(Bool)
  case number(String)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    // Most request values are strings: try the common kinds first, since every failed
    // attempt costs a thrown DecodingError.
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .number(String(value))
    } else if let value = try? container.decode([String: JSONValue].self) {
      self = .object(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      // Content is opaque; a fractional number is carried, never used as money.
      self = .number(String(try container.decode(Double.self)))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .number(let text):
      if let value = Int64(text) {
        try container.encode(value)
      } else {
        try container.encode(Double(text) ?? 0)
      }
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// Whether any key or string holds U+0000, which PostgreSQL's jsonb and text refuse.
  public var containsNUL: Bool {
    switch self {
    case .string(let text): PostgresText.containsNUL(text)
    case .array(let values): values.contains { $0.containsNUL }
    case .object(let values):
      values.contains { PostgresText.containsNUL($0.key) || $0.value.containsNUL }
    default: false
    }
  }
}
