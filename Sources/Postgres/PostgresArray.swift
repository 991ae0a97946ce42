/// A one-dimensional array parameter in PostgreSQL's text format (`{"a","b",NULL}`), cast in
/// SQL (`::text[]`, `::int[]`, `::uuid[]`, `::bytea[]`) and usually spread with `unnest`, so
/// one statement carries many rows with a fixed number of parameters.
///
/// Every element is quoted, so no value can end an element or the array early: only `"` and
/// `\` need escaping inside quotes.
public struct PostgresArray: PostgresEncodable {
  private let elements: [String?]

  public init(_ elements: [String?]) {
    self.elements = elements
  }

  public init(_ elements: [String]) {
    self.elements = elements
  }

  public init(_ elements: [Int32]) {
    self.elements = elements.map { String($0) }
  }

  /// bytea elements in hex format.
  public init(bytea elements: [[UInt8]]) {
    self.elements = elements.map(PostgresBytea.encode)
  }

  public var postgresText: String? {
    var out = "{"
    for (index, element) in elements.enumerated() {
      if index > 0 { out.append(",") }
      guard let element else {
        out.append("NULL")
        continue
      }
      out.append("\"")
      for character in element.unicodeScalars {
        if character == "\"" || character == "\\" { out.append("\\") }
        out.unicodeScalars.append(character)
      }
      out.append("\"")
    }
    out.append("}")
    return out
  }
}
