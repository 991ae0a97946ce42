/// Severity of a log line; lines below the logger's level are dropped before they are built.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
  case debug, info, notice, warning, error, critical

  public var name: String {
    switch self {
    case .debug: "debug"
    case .info: "info"
    case .notice: "notice"
    case .warning: "warning"
    case .error: "error"
    case .critical: "critical"
    }
  }

  public init?(name: String) {
    guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else {
      return nil
    }
    self = level
  }

  public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
