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

  /// The array literal, built from UTF-8 bytes: a batch of orders sends several of these, and
  /// appending character by character was a visible share of creating an order.
  public var postgresText: String? {
    var out: [UInt8] = [UInt8(ascii: "{")]
    out.reserveCapacity(2 + elements.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
    for (index, element) in elements.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      guard let element else {
        out.append(contentsOf: "NULL".utf8)
        continue
      }
      out.append(UInt8(ascii: "\""))
      for byte in element.utf8 {
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
          out.append(UInt8(ascii: "\\"))
        }
        out.append(byte)
      }
      out.append(UInt8(ascii: "\""))
    }
    out.append(UInt8(ascii: "}"))
    return String(decoding: out, as: UTF8.self)
  }

}
