import Foundation
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
    } else if let value = try? container.decode(Decimal.self) {
      // Content is opaque; a fractional number is carried, never used as money, with the
      // digits it came with (a `Decimal` holds 38).
      self = .number(value.description)
    } else {
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
      } else if let value = Self.decimal(text) {
        try container.encode(value)
      } else {
        try container.encode(Double(text) ?? 0)
      }
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// A number's text as the `Decimal` JSON output writes with its digits, when one holds it
  /// (38 significant digits, a power of ten within ±127); else the number goes out as a
  /// `Double`, and one no `Double` holds cannot be written at all.
  static func decimal(_ text: String) -> Decimal? {
    Decimal(string: text)
  }

  /// Whether every number in the value can be written out again (`decimal`, else a finite
  /// `Double`): free-form JSON an admin stores is refused otherwise, not stored and then
  /// unservable.
  public var numbersCanBeWritten: Bool {
    switch self {
    case .number(let text):
      Int64(text) != nil || Self.decimal(text) != nil || Double(text)?.isFinite == true
    case .array(let values): values.allSatisfy(\.numbersCanBeWritten)
    case .object(let values): values.values.allSatisfy(\.numbersCanBeWritten)
    default: true
    }
  }

  /// Why `numbersCanBeWritten` refused a value, for the field it came in.
  public static let unwritableNumberMessage =
    "holds a number out of range (larger in magnitude than 1.7976931348623157e308)"

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
