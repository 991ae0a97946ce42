/// A value in a structured log line.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
  case string(String)
  case int(Int)
  case double(Double)
  case bool(Bool)

  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int) { self = .int(value) }

  func append(to line: inout String) {
    switch self {
    case .int(let v): line += String(v)
    case .double(let v): line += v.isFinite ? String(v) : "null"
    case .bool(let v): line += v ? "true" : "false"
    case .string(let s): JSONString.append(s, to: &line)
    }
  }
}
