/// SQL text with `$n` placeholders and the values bound to them.
///
/// Values never enter the SQL text: interpolating a `PostgresEncodable` appends the next `$n`
/// and binds the value in text format.
///
///     let query: PostgresQuery = "SELECT * FROM orders WHERE trade_no = \(tradeNo)"
///
/// Raw text goes in only through loud names: `init(unsafeSQL:)` and `\(unescaped:)`, for
/// fragments chosen by code (a sort column from a fixed list), never by a request.
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation {
  public var sql: String
  public var binds: [String?]

  public init(unsafeSQL sql: String, binds: [String?] = []) {
    self.sql = sql
    self.binds = binds
  }

  public init(stringLiteral value: String) {
    self.init(unsafeSQL: value)
  }

  public init(stringInterpolation: StringInterpolation) {
    self.init(unsafeSQL: stringInterpolation.sql, binds: stringInterpolation.binds)
  }

  /// Appends `other`, renumbering its placeholders to follow this query's binds.
  public mutating func append(_ other: PostgresQuery) {
    sql += PostgresPlaceholders.renumber(other.sql, offset: binds.count)
    binds += other.binds
  }

  public static func + (lhs: PostgresQuery, rhs: PostgresQuery) -> PostgresQuery {
    var result = lhs
    result.append(rhs)
    return result
  }

  public struct StringInterpolation: StringInterpolationProtocol {
    var sql: String
    var binds: [String?]

    public init(literalCapacity: Int, interpolationCount: Int) {
      sql = ""
      sql.reserveCapacity(literalCapacity + interpolationCount * 3)
      binds = []
      binds.reserveCapacity(interpolationCount)
    }

    public mutating func appendLiteral(_ literal: String) {
      sql += literal
    }

    public mutating func appendInterpolation(_ value: some PostgresEncodable) {
      binds.append(value.postgresText)
      sql += "$\(binds.count)"
    }

    /// An optional binds SQL NULL when nil. (A separate overload, so that passing an optional
    /// is explicit and not mistaken for an accidental `Optional(…)` in text.)
    public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
      binds.append(value?.postgresText)
      sql += "$\(binds.count)"
    }

    /// Appends raw SQL. Only for fragments the code chose, never for input.
    public mutating func appendInterpolation(unescaped fragment: String) {
      sql += fragment
    }

    /// Embeds another query, renumbering its placeholders.
    public mutating func appendInterpolation(_ query: PostgresQuery) {
      sql += PostgresPlaceholders.renumber(query.sql, offset: binds.count)
      binds += query.binds
    }
  }
}
