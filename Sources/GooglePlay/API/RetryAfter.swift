import Foundation

/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Capped at a day so a
/// hostile or broken value cannot park a retry loop forever.
enum RetryAfter {
  static let maximumSeconds: Int64 = 86_400

  static func parse(_ value: String?, now: Date = Date()) -> Duration? {
    guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
      return nil
    }
    if let seconds = Int64(value), seconds >= 0 {
      return .seconds(min(seconds, maximumSeconds))
    }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: value) else { return nil }
    let seconds = Int64(max(0, date.timeIntervalSince(now)).rounded(.up))
    return .seconds(min(seconds, maximumSeconds))
  }
}
