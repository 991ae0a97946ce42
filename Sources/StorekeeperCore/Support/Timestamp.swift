import Foundation

/// RFC 3339 timestamps given by clients (filters).
package enum Timestamp {
  package static func parse(_ text: String) -> Date? {
    guard text.count <= 40 else { return nil }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.date(from: text)
  }

  /// `parse`, as epoch milliseconds, within the stored range (a valid RFC 3339 year such as
  /// 300000 is past what an Int64 of microseconds holds, and converting it would trap).
  package static func parseMs(_ text: String) -> Int64? {
    parse(text).map { Int64((clampedToStoredRange($0).timeIntervalSince1970 * 1000).rounded()) }
  }

  /// The millisecond `text` falls in (microseconds cut, not rounded): the precision every
  /// time Storekeeper shows has, so a bound copied from one names that time's millisecond.
  package static func parseMillisecond(_ text: String) -> Int64? {
    parse(text).map {
      let micros = Int64((clampedToStoredRange($0).timeIntervalSince1970 * 1_000_000).rounded())
      return micros >= 0 ? micros / 1000 : (micros - 999) / 1000
    }
  }

  /// Nothing Storekeeper stores lies outside 1970–9999, and PostgreSQL refuses some valid RFC
  /// 3339 dates (year 0000, which Foundation's Julian calendar makes of 0001-01-01 and 02): a
  /// filter bound outside that range means the same as the range's end.
  package static func clampedToStoredRange(_ date: Date) -> Date {
    min(max(date, Date(timeIntervalSince1970: 0)), Date(timeIntervalSince1970: 253_402_300_799))
  }
}
