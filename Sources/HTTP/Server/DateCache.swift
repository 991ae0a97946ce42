#if canImport(Glibc)
  import Glibc
#endif

/// The `Date` header line (RFC 9110 §5.6.7 IMF-fixdate), rebuilt at most once a second.
struct DateCache {
  private var second = -1
  private(set) var line: [UInt8] = []

  private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  /// "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" for the current second.
  mutating func current() -> [UInt8] {
    var now = time(nil)
    if now != second {
      second = now
      var parts = tm()
      gmtime_r(&now, &parts)
      func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
      let text =
        "Date: \(Self.days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(Self.months[Int(parts.tm_mon)]) "
        + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
      line = Array(text.utf8)
    }
    return line
  }
}
