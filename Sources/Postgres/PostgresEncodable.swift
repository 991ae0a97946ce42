import Foundation

/// A Swift value that can be bound as a query parameter, in PostgreSQL's text format.
///
/// `nil` binds SQL NULL. There is deliberately no conformance for `Double` or `Decimal`:
/// money travels as a `String` holding a decimal literal, cast with `::numeric` in SQL.
public protocol PostgresEncodable: Sendable {
  var postgresText: String? { get }
}

extension String: PostgresEncodable {
  public var postgresText: String? { self }
}

extension Int: PostgresEncodable {
  public var postgresText: String? { String(self) }
}

extension Int32: PostgresEncodable {
  public var postgresText: String? { String(self) }
}

extension Int64: PostgresEncodable {
  public var postgresText: String? { String(self) }
}

extension Bool: PostgresEncodable {
  public var postgresText: String? { self ? "true" : "false" }
}

extension UUID: PostgresEncodable {
  public var postgresText: String? { uuidString.lowercased() }
}

extension Date: PostgresEncodable {
  /// UTC ISO 8601 with microseconds, which is PostgreSQL's own precision.
  public var postgresText: String? { PostgresTimestamp.format(self) }
}

extension Array: PostgresEncodable where Element == UInt8 {
  /// bytea in hex format.
  public var postgresText: String? { PostgresBytea.encode(self) }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
  public var postgresText: String? {
    switch self {
    case .none: return nil
    case .some(let value): return value.postgresText
    }
  }
}
