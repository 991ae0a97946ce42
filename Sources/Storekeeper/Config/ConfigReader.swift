import StorekeeperCore

/// Reads settings from the environment; every refusal names its variable, and an empty value
/// counts as unset.
struct ConfigReader {
  let env: [String: String]

  func value(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }

  func required(_ name: String) throws -> String {
    guard let text = value(name) else {
      throw ConfigError(variable: name, problem: "is required but not set")
    }
    return text
  }

  /// An identifier or URL compared with what others send (a bundle id, an issuer, a key id)
  /// or used as written: nil when unset, refused when it starts or ends with whitespace or
  /// holds a control character, which a secret file's trailing newline or an env file's
  /// trailing space put there. Trimming would guess; refusing says which variable to fix.
  func text(_ name: String) throws -> String? {
    guard let text = value(name) else { return nil }
    try Self.checkClean(text, name)
    return text
  }

  /// `text(name)`, required.
  func requiredText(_ name: String) throws -> String {
    guard let text = try text(name) else {
      throw ConfigError(variable: name, problem: "is required but not set")
    }
    return text
  }

  /// Refuses leading or trailing whitespace and control characters anywhere, without
  /// repeating the value (it may be a secret).
  static func checkClean(_ text: String, _ name: String) throws {
    if let first = text.first, let last = text.last, first.isWhitespace || last.isWhitespace {
      throw ConfigError(
        variable: name,
        problem:
          "starts or ends with whitespace (a trailing newline from a secret file, a space in an env file?): remove it"
      )
    }
    if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
      throw ConfigError(variable: name, problem: "holds a control character: remove it")
    }
  }

  func integer(_ name: String, _ range: ClosedRange<Int>) throws -> Int? {
    guard let text = value(name) else { return nil }
    guard let number = Int(text), range.contains(number) else {
      throw ConfigError(
        variable: name,
        problem:
          "must be an integer in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
    }
    return number
  }

  /// The longest duration any setting takes. Durations are added to dates and multiplied
  /// (a report's lease is three `APPLE_TIMEOUT`s): far past this they overflow and trap, or
  /// make every statement that uses them fail, long after start-up said nothing.
  static let longestDurationMs: Int64 = 3650 * 86_400_000

  /// Milliseconds of a positive duration such as `30s`, `15m` or `24h`, at most 3650 days.
  func duration(_ name: String) throws -> Int64? {
    guard let text = value(name) else { return nil }
    guard let ms = DurationParser.milliseconds(text), ms > 0, ms <= Self.longestDurationMs else {
      throw ConfigError(
        variable: name,
        problem: "must be a duration such as 30s, 15m or 24h, at most 3650d, got \"\(text)\"")
    }
    return ms
  }

  /// An IANA zone's name as PostgreSQL lists them (`Europe/Berlin`, `UTC`): its characters
  /// only, here; whether PostgreSQL knows it is asked at start-up, of the database.
  func timeZone(_ name: String) throws -> String? {
    guard let text = value(name) else { return nil }
    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-/")
    guard text.count <= 64, text.allSatisfy(allowed.contains) else {
      throw ConfigError(
        variable: name, problem: "must be an IANA time zone such as Europe/Berlin, got \"\(text)\"")
    }
    return text
  }
}
