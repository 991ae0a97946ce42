#if canImport(Glibc)
  import Glibc
#endif

/// RFC 3339 UTC timestamps with milliseconds, without Foundation's formatter cost.
enum LogClock {
  static func timestamp() -> String {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    var seconds = ts.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func pad(_ v: Int32, _ width: Int) -> String {
      let s = String(v)
      return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    let ms = Int32(ts.tv_nsec / 1_000_000)
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
      + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(ms, 3))Z"
  }
}
