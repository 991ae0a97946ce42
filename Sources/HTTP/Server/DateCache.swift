#if canImport(Glibc)
  import Glibc
#endif

/// The `Date` header line (RFC 9110 §5.6.7 IMF-fixdate), rebuilt at most once a second. Kept
/// in a fixed-size value, not an array, so writing it into a response costs no reference
/// counting.
struct DateCache {
  private var second = -1
  /// "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" is 37 bytes; room for a five-digit year.
  private var bytes:
    (
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
    ) = (0, 0, 0, 0, 0, 0)
  private var count = 0

  private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  /// Brings the line up to the current second.
  mutating func refresh() {
    var now = time(nil)
    guard now != second else { return }
    second = now
    var parts = tm()
    gmtime_r(&now, &parts)
    func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
    let text =
      "Date: \(Self.days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(Self.months[Int(parts.tm_mon)]) "
      + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
    let utf8 = Array(text.utf8)
    withUnsafeMutableBytes(of: &bytes) { room in
      count = min(utf8.count, room.count)
      room.copyBytes(from: utf8.prefix(count))
    }
  }

  /// The line of the last `refresh()`.
  func withLine<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
    withUnsafeBytes(of: bytes) { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
  }
}
