/// A receiver's `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, read as the
/// wait from now. The HTTP-date takes all three forms RFC 9110 §5.6.7 says a recipient must
/// accept (IMF-fixdate, RFC 850, asctime). Anything else is no answer: the delivery keeps its
/// own backoff. A date already past is a wait of zero.
package enum WebhookRetryAfter {
  /// The wait in milliseconds, or nil when the value is not a Retry-After.
  package static func delayMs(_ value: String, nowMs: Int64) -> Int64? {
    let text = trimmed(value)
    guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
    if text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
      // More digits than any sane wait are clamped, not an error: the caller caps it anyway.
      guard text.utf8.count <= 12, let seconds = Int64(text) else { return Int64.max / 2 }
      return seconds * 1000
    }
    guard let epochSeconds = httpDate(text, nowMs: nowMs) else { return nil }
    return max(0, epochSeconds * 1000 - nowMs)
  }

  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]
  private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
  private static let longDays = [
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
  ]

  /// Seconds since the epoch of an HTTP-date, or nil.
  static func httpDate(_ text: String, nowMs: Int64) -> Int64? {
    let fields = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    switch fields.count {
    case 6:
      // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
      guard fields[0].hasSuffix(","), shortDays.contains(String(fields[0].dropLast())),
        fields[5] == "GMT", fields[1].utf8.count == 2, fields[3].utf8.count == 4,
        let day = Int(fields[1]), let month = months.firstIndex(of: fields[2]),
        let year = Int(fields[3])
      else { return nil }
      return epoch(year: year, month: month + 1, day: day, time: fields[4])
    case 4 where fields[0].hasSuffix(","):
      // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
      let date = fields[1].split(separator: "-").map(String.init)
      guard longDays.contains(String(fields[0].dropLast())), fields[3] == "GMT", date.count == 3,
        date[0].utf8.count == 2, date[2].utf8.count == 2, let day = Int(date[0]),
        let month = months.firstIndex(of: date[1]), let yy = Int(date[2])
      else { return nil }
      // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is the century before.
      let thisYear = 1970 + Int(nowMs / 1000 / 31_556_952)
      let year = 2000 + yy > thisYear + 50 ? 1900 + yy : 2000 + yy
      return epoch(year: year, month: month + 1, day: day, time: fields[2])
    case 5:
      // asctime: `Sun Nov  6 08:49:37 1994`.
      guard shortDays.contains(fields[0]), let month = months.firstIndex(of: fields[1]),
        (1...2).contains(fields[2].utf8.count), let day = Int(fields[2]),
        fields[4].utf8.count == 4, let year = Int(fields[4])
      else { return nil }
      return epoch(year: year, month: month + 1, day: day, time: fields[3])
    default:
      return nil
    }
  }

  /// `HH:MM:SS` on a civil date (UTC) as seconds since the epoch (Howard Hinnant's
  /// days-from-civil), or nil when a field is out of range.
  private static func epoch(year: Int, month: Int, day: Int, time: String) -> Int64? {
    let parts = time.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 3, parts.allSatisfy({ $0.utf8.count == 2 }),
      let hour = Int(parts[0]), let minute = Int(parts[1]), let second = Int(parts[2]),
      (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
      (1...12).contains(month), (1...31).contains(day), (1900...9999).contains(year)
    else { return nil }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    guard day <= lengths[month - 1] else { return nil }
    let y = month <= 2 ? year - 1 : year
    let era = y / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = Int64(era * 146_097 + dayOfEra - 719_468)
    return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
  }

  /// Without leading and trailing spaces and tabs (the optional whitespace around a value).
  private static func trimmed(_ value: String) -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let first = value.firstIndex(where: { !isSpace($0) }),
      let last = value.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(value[first...last])
  }
}
