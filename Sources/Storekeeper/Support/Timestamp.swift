import Foundation

/// RFC 3339 timestamps given by clients (filters).
enum Timestamp {
  static func parse(_ text: String) -> Date? {
    guard text.count <= 40 else { return nil }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.date(from: text)
  }
}
