import Foundation

/// Timestamps in PostgreSQL's text format, without `DateFormatter` (slow, and locale-bound).
///
/// Output is ISO 8601 in UTC with microseconds; input accepts what the server prints for
/// `timestamptz` (`2026-11-29 13:26:31.123456+00`, any offset), `timestamp` (read as UTC) and
/// `date` (midnight UTC).
enum PostgresTimestamp {
  static func format(_ date: Date) -> String {
    let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    let seconds = floorDiv(micros, 1_000_000)
    let fraction = micros - seconds * 1_000_000
    let days = floorDiv(seconds, 86_400)
    let secondOfDay = seconds - days * 86_400
    let (year, month, day) = civil(fromDays: days)
    var out = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
    out += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":"
    out += pad(secondOfDay % 60, 2) + "." + pad(fraction, 6) + "Z"
    return out
  }

  static func parse(_ text: String) -> Date? {
    var scanner = ByteScanner(Array(text.utf8))
    guard let year = scanner.number(minDigits: 4, maxDigits: 6), scanner.take("-"),
      let month = scanner.number(minDigits: 2, maxDigits: 2), scanner.take("-"),
      let day = scanner.number(minDigits: 2, maxDigits: 2),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    var secondOfDay: Int64 = 0
    var micros: Int64 = 0
    var offset: Int64 = 0
    if scanner.take(" ") || scanner.take("T") {
      guard let hour = scanner.number(minDigits: 2, maxDigits: 2), scanner.take(":"),
        let minute = scanner.number(minDigits: 2, maxDigits: 2), scanner.take(":"),
        let second = scanner.number(minDigits: 2, maxDigits: 2),
        hour <= 24, minute < 60, second < 61
      else { return nil }
      secondOfDay = hour * 3600 + minute * 60 + second
      if scanner.take(".") {
        guard let (value, digits) = scanner.digits(max: 9), digits > 0 else { return nil }
        micros = scaleToMicros(value, digits: digits)
      }
      if scanner.take("Z") {
        offset = 0
      } else if let sign = scanner.sign() {
        guard let hours = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
        var total = hours * 3600
        if scanner.take(":") {
          guard let minutes = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
          total += minutes * 60
          if scanner.take(":") {
            guard let seconds = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
            total += seconds
          }
        }
        offset = sign * total
      }
    }
    guard scanner.atEnd else { return nil }
    let seconds = days(fromCivil: year, month, day) * 86_400 + secondOfDay - offset
    return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
  }

  private static func scaleToMicros(_ value: Int64, digits: Int) -> Int64 {
    var v = value
    var d = digits
    while d < 6 {
      v *= 10
      d += 1
    }
    while d > 6 {
      v /= 10
      d -= 1
    }
    return v
  }

  // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
  static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let s = String(value)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
  }
}

/// A cursor over ASCII bytes for the small fixed grammars above.
private struct ByteScanner {
  let bytes: [UInt8]
  var index = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  var atEnd: Bool { index == bytes.count }

  mutating func take(_ char: Unicode.Scalar) -> Bool {
    guard index < bytes.count, bytes[index] == UInt8(ascii: char) else { return false }
    index += 1
    return true
  }

  mutating func sign() -> Int64? {
    if take("+") { return 1 }
    if take("-") { return -1 }
    return nil
  }

  mutating func digits(max: Int) -> (Int64, Int)? {
    var value: Int64 = 0
    var count = 0
    while index < bytes.count, count < max, bytes[index] >= 0x30, bytes[index] <= 0x39 {
      value = value * 10 + Int64(bytes[index] - 0x30)
      count += 1
      index += 1
    }
    return (value, count)
  }

  mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
    guard let (value, count) = digits(max: maxDigits), count >= minDigits else { return nil }
    return value
  }
}
