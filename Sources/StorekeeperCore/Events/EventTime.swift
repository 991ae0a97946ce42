import Foundation

/// Apple's epoch milliseconds as the RFC 3339 text the API writes everywhere
/// (`2026-11-29T13:26:31.123Z`), in integer arithmetic so no millisecond is lost to rounding.
enum EventTime {
  static func rfc3339(ms: Int64) -> String {
    // Floored without a subtraction first, which would trap near Int64.min.
    let (quotient, rest) = ms.quotientAndRemainder(dividingBy: 1000)
    let (seconds, millis) = rest < 0 ? (quotient - 1, rest + 1000) : (quotient, rest)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    let whole = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
    let fraction = String(millis + 1000).dropFirst()
    return whole.dropLast() + "." + fraction + "Z"
  }

  static func value(ms: Int64?) -> JSONValue {
    ms.map { .string(rfc3339(ms: $0)) } ?? .null
  }
}
