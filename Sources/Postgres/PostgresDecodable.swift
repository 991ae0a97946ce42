import Foundation

/// A Swift value that can be read from a column in PostgreSQL's text format.
///
/// SQL NULL never reaches `init(postgresText:)`: `PostgresRow.decode` reports it as its own
/// error and `decodeIfPresent` returns `nil`.
public protocol PostgresDecodable: Sendable {
  init(postgresText: String) throws
}

/// Thrown by the conformances below; `PostgresRow` turns it into a `PostgresError` that names
/// the column.
struct PostgresConversionFailure: Error {
  var type: String
}

extension String: PostgresDecodable {
  public init(postgresText: String) { self = postgresText }
}

extension Int: PostgresDecodable {
  public init(postgresText: String) throws {
    guard let value = Int(postgresText) else { throw PostgresConversionFailure(type: "Int") }
    self = value
  }
}

extension Int32: PostgresDecodable {
  public init(postgresText: String) throws {
    guard let value = Int32(postgresText) else { throw PostgresConversionFailure(type: "Int32") }
    self = value
  }
}

extension Int64: PostgresDecodable {
  public init(postgresText: String) throws {
    guard let value = Int64(postgresText) else { throw PostgresConversionFailure(type: "Int64") }
    self = value
  }
}

extension Bool: PostgresDecodable {
  public init(postgresText: String) throws {
    switch postgresText {
    case "t", "true": self = true
    case "f", "false": self = false
    default: throw PostgresConversionFailure(type: "Bool")
    }
  }
}

extension Double: PostgresDecodable {
  /// For statistics only; money is decoded as `String`.
  public init(postgresText: String) throws {
    switch postgresText {
    case "NaN": self = .nan
    case "Infinity": self = .infinity
    case "-Infinity": self = -.infinity
    default:
      guard let value = Double(postgresText) else {
        throw PostgresConversionFailure(type: "Double")
      }
      self = value
    }
  }
}

extension UUID: PostgresDecodable {
  public init(postgresText: String) throws {
    guard let value = UUID(uuidString: postgresText) else {
      throw PostgresConversionFailure(type: "UUID")
    }
    self = value
  }
}

extension Date: PostgresDecodable {
  public init(postgresText: String) throws {
    guard let value = PostgresTimestamp.parse(postgresText) else {
      throw PostgresConversionFailure(type: "Date")
    }
    self = value
  }
}

extension Array: PostgresDecodable where Element == UInt8 {
  public init(postgresText: String) throws {
    guard let value = PostgresBytea.decode(postgresText) else {
      throw PostgresConversionFailure(type: "[UInt8]")
    }
    self = value
  }
}
