import Foundation

/// A `google-datetime` field: RFC 3339 in UTC, with or without fractional seconds
/// ("2024-05-01T12:00:00.123Z"). Kept as Google's text; read through `date`.
enum GoogleDateTime {
  static func date(_ text: String?) -> Date? {
    guard let text else { return nil }
    if let date = try? Date(
      text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    {
      return date
    }
    return try? Date(text, strategy: Date.ISO8601FormatStyle())
  }

  /// How the fake writes them: milliseconds, as Google does.
  static func string(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}
