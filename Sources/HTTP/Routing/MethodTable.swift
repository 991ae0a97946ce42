/// The handlers of one path, by method. A path has a handful of methods at most, so a
/// linear scan comparing method names (short strings, compared by their bits) beats hashing
/// the method into a dictionary on every request.
struct MethodTable: Sendable {
  private var entries: [(method: HTTPMethod, handler: RouteHandler)] = []

  subscript(method: HTTPMethod) -> RouteHandler? {
    get {
      for entry in entries where entry.method == method { return entry.handler }
      return nil
    }
    set {
      if let i = entries.firstIndex(where: { $0.method == method }) {
        if let newValue { entries[i].handler = newValue } else { entries.remove(at: i) }
      } else if let newValue {
        entries.append((method, newValue))
      }
    }
  }

  /// The methods with a handler, in registration order.
  var methods: [HTTPMethod] { entries.map(\.method) }
}
