/// Ordered header fields; lookups ignore ASCII case, as field names are case-insensitive.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
  private var fields: [(name: String, value: String)]

  public init() { fields = [] }

  /// Room for `count` fields, so adding them allocates once (hot paths that know their set).
  public init(capacity count: Int) {
    fields = []
    fields.reserveCapacity(count)
  }

  public init(_ pairs: [(String, String)]) { fields = pairs.map { (name: $0.0, value: $0.1) } }

  public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

  public var count: Int { fields.count }
  public var isEmpty: Bool { fields.isEmpty }

  /// The first value of `name`, if any.
  public subscript(name: String) -> String? {
    // By index through the buffer: a `for` loop over the array copies every field it visits.
    fields.withUnsafeBufferPointer { fields in
      for i in fields.indices where Self.equalsIgnoringCase(fields[i].name, name) {
        return fields[i].value
      }
      return nil
    }
  }

  public func values(_ name: String) -> [String] {
    fields.filter { Self.equalsIgnoringCase($0.name, name) }.map(\.value)
  }

  public func contains(_ name: String) -> Bool { self[name] != nil }

  public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

  /// Replaces the first field called `name` and drops the others, or appends one.
  public mutating func replaceOrAdd(_ name: String, _ value: String) {
    guard let index = fields.firstIndex(where: { Self.equalsIgnoringCase($0.name, name) }) else {
      fields.append((name, value))
      return
    }
    fields[index].value = value
    var i = fields.count - 1
    while i > index {
      if Self.equalsIgnoringCase(fields[i].name, name) { fields.remove(at: i) }
      i -= 1
    }
  }

  public mutating func remove(_ name: String) {
    fields.removeAll { Self.equalsIgnoringCase($0.name, name) }
  }

  /// Visits every field in order without copying the list or its strings (a `for` loop over
  /// the sequence retains and releases each name and value).
  func forEachField(_ body: (String, String) -> Void) {
    fields.withUnsafeBufferPointer { fields in
      for i in fields.indices { body(fields[i].name, fields[i].value) }
    }
  }

  public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
    fields.makeIterator()
  }

  /// ASCII case-insensitive comparison without allocating lowercased copies.
  static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
    a.withUTF8Bytes { x in
      b.withUTF8Bytes { y in
        guard x.count == y.count else { return false }
        for i in 0..<x.count where x[i] != y[i] {
          if x[i] | 0x20 != y[i] | 0x20 { return false }
          let lower = x[i] | 0x20
          if lower < UInt8(ascii: "a") || lower > UInt8(ascii: "z") { return false }
        }
        return true
      }
    }
  }
}
