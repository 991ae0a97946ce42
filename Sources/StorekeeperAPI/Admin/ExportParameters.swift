import HTTP
import StorekeeperCore

/// The query of an export request, checked before any SQL runs: every wrong parameter is named
/// in one 422 `invalid_export_query`. The range is bounded (`maxDays`), so one request reads at
/// most three years of rows; the command has no such bound.
package struct ExportParameters {
  static let known: Set<String> = ["from", "to", "format"]
  static let maxDays = 1096

  /// The range as asked (the file's name shows its dates).
  var from: String
  var to: String
  /// The same instants as PostgreSQL is handed them: in UTC (`utc`).
  var fromUTC: String
  var toUTC: String
  var format: ExportFormat

  /// The instant `text` names, in seconds since 1970: a date `YYYY-MM-DD` (midnight UTC) or an
  /// RFC 3339 date-time with a zone (`2026-03-01T12:00:00Z`, `…T12:00:00.5+02:00`), years 2000
  /// to 2099. Nil for anything else.
  static func instant(_ text: String) -> Int? {
    parts(text)?.seconds
  }

  /// The instant `text` names written in UTC (`2026-03-01T10:00:00.5Z`), the fraction kept as
  /// given. PostgreSQL is handed only this: RFC 3339 allows zone offsets up to 23:59, and
  /// PostgreSQL refuses any beyond 15:59, which it did only once the answer was streaming.
  package static func utc(_ text: String) -> String? {
    guard let (seconds, fraction) = parts(text) else { return nil }
    let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let rest = seconds - day * 86_400
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let time = "\(two(rest / 3_600)):\(two(rest % 3_600 / 60)):\(two(rest % 60))"
    return "\(ChartParameters.text(day: day))T\(time)\(fraction.isEmpty ? "" : "." + fraction)Z"
  }

  /// `instant`'s seconds and the fraction's digits (empty without one).
  private static func parts(_ text: String) -> (seconds: Int, fraction: String)? {
    let bytes = Array(text.utf8)
    guard (10...35).contains(bytes.count), let day = ChartParameters.day(String(text.prefix(10)))
    else { return nil }
    if bytes.count == 10 { return (day * 86_400, "") }
    func number(_ at: Int, _ width: Int) -> Int? {
      guard at + width <= bytes.count else { return nil }
      var value = 0
      for byte in bytes[at..<(at + width)] {
        guard byte >= 48, byte <= 57 else { return nil }
        value = value * 10 + Int(byte - 48)
      }
      return value
    }
    guard bytes[10] == UInt8(ascii: "T"), bytes.count >= 20, bytes[13] == UInt8(ascii: ":"),
      bytes[16] == UInt8(ascii: ":"), let hour = number(11, 2), let minute = number(14, 2),
      let second = number(17, 2), hour < 24, minute < 60, second < 60
    else { return nil }
    var at = 19
    var fraction = ""
    if bytes[at] == UInt8(ascii: ".") {
      at += 1
      let digits = bytes[at...].prefix { $0 >= 48 && $0 <= 57 }.count
      guard (1...9).contains(digits) else { return nil }
      fraction = String(decoding: bytes[at..<(at + digits)], as: UTF8.self)
      at += digits
    }
    guard at < bytes.count else { return nil }
    var offset = 0
    switch bytes[at] {
    case UInt8(ascii: "Z"):
      guard at + 1 == bytes.count else { return nil }
    case UInt8(ascii: "+"), UInt8(ascii: "-"):
      guard at + 6 == bytes.count, bytes[at + 3] == UInt8(ascii: ":"),
        let hours = number(at + 1, 2), let minutes = number(at + 4, 2), hours < 24, minutes < 60
      else { return nil }
      offset = (hours * 60 + minutes) * 60 * (bytes[at] == UInt8(ascii: "-") ? -1 : 1)
    default:
      return nil
    }
    return (day * 86_400 + hour * 3_600 + minute * 60 + second - offset, fraction)
  }

  /// The export `query` asks for, or a 422 naming every problem.
  static func parse(_ query: [String: String]) throws -> ExportParameters {
    var problems: [FieldError] = []
    for key in query.keys.sorted() where !known.contains(key) {
      problems.append(FieldError(field: key, message: "is not a known parameter"))
    }
    let rule = "is required: a date YYYY-MM-DD or an RFC 3339 date-time with a zone, 2000 to 2099"
    let from = query["from"].flatMap { instant($0) }
    if from == nil { problems.append(FieldError(field: "from", message: rule)) }
    let to = query["to"].flatMap { instant($0) }
    if to == nil { problems.append(FieldError(field: "to", message: rule)) }
    if let from, let to {
      if from >= to {
        problems.append(FieldError(field: "from", message: "must be before to"))
      } else if to - from > maxDays * 86_400 {
        problems.append(
          FieldError(field: "to", message: "the range must be at most \(maxDays) days"))
      }
    }
    var format = ExportFormat.csv
    if let text = query["format"] {
      if let value = ExportFormat(rawValue: text) {
        format = value
      } else {
        problems.append(FieldError(field: "format", message: "must be csv or jsonl"))
      }
    }
    guard problems.isEmpty, let fromText = query["from"], let toText = query["to"],
      let fromUTC = utc(fromText), let toUTC = utc(toText)
    else {
      throw HTTPError(
        422, code: "invalid_export_query", detail: "one or more query parameters are invalid",
        fields: problems)
    }
    return ExportParameters(
      from: fromText, to: toText, fromUTC: fromUTC, toUTC: toUTC, format: format)
  }
}
