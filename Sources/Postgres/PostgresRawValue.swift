/// A `String`-backed enum binds as its raw value and decodes from it, so a state column is read
/// and written as the Swift type and its spellings live in one place. A spelling the enum does
/// not know is a conversion error that names the column, never a silent default.
extension PostgresEncodable where Self: RawRepresentable, RawValue == String {
  public var postgresText: String? { rawValue }
}

extension PostgresDecodable where Self: RawRepresentable, RawValue == String {
  public init(postgresText: String) throws {
    guard let value = Self(rawValue: postgresText) else {
      throw PostgresConversionFailure(type: String(describing: Self.self))
    }
    self = value
  }
}

/// Both directions: what a state column's enum declares.
public typealias PostgresEnum = PostgresEncodable & PostgresDecodable
