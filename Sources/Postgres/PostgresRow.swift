/// One row of a result, already copied out of libpq; values are kept in text format and
/// converted on access.
public struct PostgresRow: Sendable {
  let description: PostgresRowDescription
  let values: [String?]

  init(description: PostgresRowDescription, values: [String?]) {
    self.description = description
    self.values = values
  }

  public var columns: [String] { description.names }

  /// The value of `column`; SQL NULL throws (`decodingProblem == .unexpectedNull`), a value
  /// that does not convert throws `.badValue`.
  public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
    guard let value = try decodeIfPresent(column, as: type) else {
      throw PostgresError(
        kind: .decoding, message: "column \"\(column)\" is NULL", column: column,
        decodingProblem: .unexpectedNull)
    }
    return value
  }

  /// Whether the result has `column` (a query whose shape varies by case).
  public func has(_ column: String) -> Bool { description.index[column] != nil }

  /// The value of `column`, or `nil` for SQL NULL.
  public func decodeIfPresent<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self)
    throws -> T?
  {
    guard let index = description.index[column] else {
      throw PostgresError(
        kind: .decoding, message: "no column \"\(column)\" in the result", column: column,
        decodingProblem: .noSuchColumn)
    }
    guard let text = values[index] else { return nil }
    do {
      return try T(postgresText: text)
    } catch let error as PostgresError {
      throw error
    } catch {
      let typeName = String(describing: T.self)
      throw PostgresError(
        kind: .decoding, message: "column \"\(column)\" does not convert to \(typeName)",
        column: column, decodingProblem: .badValue(type: typeName))
    }
  }

  /// Whether `column` is SQL NULL (false for a column that does not exist).
  public func isNull(_ column: String) -> Bool {
    guard let index = description.index[column] else { return false }
    return values[index] == nil
  }
}

/// Column names of a result, shared by all its rows.
final class PostgresRowDescription: Sendable {
  let names: [String]
  let index: [String: Int]

  init(names: [String]) {
    self.names = names
    var index = [String: Int](minimumCapacity: names.count)
    // The first of duplicate names wins, as in most drivers.
    for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
    self.index = index
  }
}
