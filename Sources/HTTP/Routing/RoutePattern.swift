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

  /// Matches raw (still percent-encoded) path segments; parameters come back decoded.
  func match(_ rawSegments: [Substring]) -> [String: String]? {
    guard rawSegments.count == segments.count else { return nil }
    var parameters: [String: String] = [:]
    for (segment, raw) in zip(segments, rawSegments) {
      guard let decoded = PercentDecoding.decode(raw, plusAsSpace: false) else { return nil }
      switch segment {
      case .literal(let literal):
        if decoded != literal { return nil }
      case .parameter(let name):
        if decoded.isEmpty { return nil }
        parameters[name] = decoded
      }
    }
    return parameters
  }
}
