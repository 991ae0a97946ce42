/// A route path such as `/v1/orders/{trade_no}`: literal segments and `{name}` parameters,
/// each parameter matching exactly one non-empty segment.
struct RoutePattern: Sendable {
  enum Segment: Sendable, Equatable {
    case literal(String)
    case parameter(String)
  }

  let text: String
  let segments: [Segment]

  init(_ text: String) {
    self.text = text
    segments = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
      part in
      if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
        return .parameter(String(part.dropFirst().dropLast()))
      }
      return .literal(String(part))
    }
  }

  var isStatic: Bool { !segments.contains { if case .parameter = $0 { true } else { false } } }

  /// Matches path segments, already percent-decoded.
  func match(_ decoded: [String], escaped: UInt64 = 0) -> PathParameters? {
    guard decoded.count == segments.count else { return nil }
    var parameters = PathParameters()
    for index in segments.indices {
      switch segments[index] {
      case .literal(let literal):
        // A literal word matches only as spelled: `escaped` marks the segments that held a
        // percent escape (`Router.decodedSegments`).
        if decoded[index] != literal || escaped & (1 << UInt64(min(index, 63))) != 0 {
          return nil
        }
      case .parameter(let name):
        if decoded[index].isEmpty { return nil }
        parameters.add(name, decoded[index])
      }
    }
    return parameters
  }
}
