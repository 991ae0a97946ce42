import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Writes one JSON object per line to standard error.
///
/// A line is assembled in memory and written with a single `write(2)`, so lines from
/// concurrent threads never interleave.
public struct Logger: Sendable {
  public var label: String
  public var level: LogLevel
  /// Fields added to every line this logger writes (e.g. `request_id`).
  public var metadata: [String: String]

  public init(label: String, level: LogLevel = .info, metadata: [String: String] = [:]) {
    self.label = label
    self.level = level
    self.metadata = metadata
  }

  public func with(_ key: String, _ value: String) -> Logger {
    var copy = self
    copy.metadata[key] = value
    return copy
  }

  public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

  public func log(
    _ level: LogLevel, _ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]
  ) {
    guard isEnabled(level) else { return }
    var line = "{\"ts\":\"\(LogClock.timestamp())\",\"level\":\"\(level.name)\",\"logger\":"
    LogValue.string(label).append(to: &line)
    line += ",\"msg\":"
    LogValue.string(message()).append(to: &line)
    for (key, value) in metadata.sorted(by: { $0.key < $1.key }) where fields[key] == nil {
      line += ","
      LogValue.string(key).append(to: &line)
      line += ":"
      LogValue.string(value).append(to: &line)
    }
    for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
      line += ","
      LogValue.string(key).append(to: &line)
      line += ":"
      value.append(to: &line)
    }
    line += "}\n"
    var bytes = Array(line.utf8)
    bytes.withUnsafeMutableBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
        if n <= 0 { return }
        offset += n
      }
    }
  }

  public func debug(_ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]) {
    log(.debug, message(), fields)
  }
  public func info(_ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]) {
    log(.info, message(), fields)
  }
  public func notice(_ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]) {
    log(.notice, message(), fields)
  }
  public func warning(_ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]) {
    log(.warning, message(), fields)
  }
  public func error(_ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]) {
    log(.error, message(), fields)
  }
  public func critical(_ message: @autoclosure () -> String, _ fields: [String: LogValue] = [:]) {
    log(.critical, message(), fields)
  }
}
