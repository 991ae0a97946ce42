/// A route's path parameters by the names in its pattern, percent-decoded. Routes have one or
/// two, so they are kept in order and found by comparing names: a dictionary cost an
/// allocation and two hashes (filled by the router, read by the handler) on every request to
/// a patterned route.
public struct PathParameters: Sendable, ExpressibleByDictionaryLiteral {
  /// Inline: the common route has one parameter and so allocates nothing here.
  private var first: (name: String, value: String)?
  private var more: [(name: String, value: String)] = []

  public init() {}

  public init(dictionaryLiteral elements: (String, String)...) {
    for (name, value) in elements { add(name, value) }
  }

  public var count: Int { (first == nil ? 0 : 1) + more.count }

  public subscript(name: String) -> String? {
    if let first, first.name == name { return first.value }
    return more.first { $0.name == name }?.value
  }

  /// A pattern names each parameter once; a name given again replaces its value.
  mutating func add(_ name: String, _ value: String) {
    if first == nil || first?.name == name {
      first = (name, value)
    } else if let index = more.firstIndex(where: { $0.name == name }) {
      more[index].value = value
    } else {
      more.append((name, value))
    }
  }
}
