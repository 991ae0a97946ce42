import Foundation

/// The `Retry-After` of an App Store Server API 429, read as Apple documents it ("Identifying
/// rate limits": a UNIX time in milliseconds at which the next request may be sent), and as
/// RFC 9110 spells it (delay-seconds) when the number is too small to be a time in
/// milliseconds, so a proxy in front that answers the standard way is honoured too.
package enum AppleRetryAfter {
  /// Numbers below this (about 1973 in milliseconds, 3,170 years in seconds) are seconds.
  package static let smallestMilliseconds: Int64 = 100_000_000_000

  /// When the next request may go, or nil when the field is absent or not a number.
  package static func instant(_ value: String?, now: Date) -> Date? {
    guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
      text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
      text.utf8.count <= 18, let number = Int64(text)
    else { return nil }
    if number >= smallestMilliseconds {
      return Date(timeIntervalSince1970: Double(number) / 1000)
    }
    return now.addingTimeInterval(Double(number))
  }
}
