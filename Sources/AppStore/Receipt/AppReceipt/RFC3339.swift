#if canImport(Glibc)
  import Glibc
#endif

/// Apple's receipt dates: RFC 3339, `2015-08-13T07:50:46Z`, perhaps with fractional seconds or
/// a numeric offset. Parsed by hand because it runs on client bytes on every receipt and
/// Foundation's formatters are neither cheap nor thread-safe to share.
enum RFC3339 {
  /// Whole seconds since the epoch (fractions dropped), or nil unless `text` is exactly such a
  /// date.
  static func seconds(_ text: String) -> Int64? {
    let bytes = Array(text.utf8)
    guard bytes.count >= 20, bytes.count <= 40 else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for byte in bytes[range] {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return value
    }
    func byte(_ index: Int, is character: Character) -> Bool {
      character.asciiValue == bytes[index]
    }
    guard let year = number(0..<4), byte(4, is: "-"), let month = number(5..<7),
      byte(7, is: "-"), let day = number(8..<10), byte(10, is: "T") || byte(10, is: "t"),
      let hour = number(11..<13), byte(13, is: ":"), let minute = number(14..<16),
      byte(16, is: ":"), let second = number(17..<19),
      (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    var index = 19
    if byte(index, is: ".") {
      index += 1
      let start = index
      while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
        index += 1
      }
      guard index > start, index < bytes.count else { return nil }
    }
    var offset = 0
    if byte(index, is: "Z") || byte(index, is: "z") {
      index += 1
    } else {
      guard index + 6 == bytes.count, byte(index, is: "+") || byte(index, is: "-"),
        let hours = number((index + 1)..<(index + 3)), byte(index + 3, is: ":"),
        let minutes = number((index + 4)..<(index + 6)), hours < 24, minutes < 60
      else { return nil }
      offset = (hours * 60 + minutes) * 60 * (byte(index, is: "-") ? -1 : 1)
      index += 6
    }
    guard index == bytes.count else { return nil }
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    return Int64(timegm(&parts)) - Int64(offset)
  }
}
