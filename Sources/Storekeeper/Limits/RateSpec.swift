import Foundation

/// A token-bucket rate as configured: `N/s`, `N/min` or `N/h`, optionally `,burst=M` (how many
/// requests may come at once after a quiet spell; defaults to N), or `off`.
struct RateSpec: Sendable, Equatable {
  var perSecond: Double
  var burst: Int

  init(perSecond: Double, burst: Int) {
    self.perSecond = perSecond
    self.burst = burst
  }

  /// nil for `off`; throws a readable problem for anything else it cannot read.
  static func parse(_ text: String) throws(ParseFailure) -> RateSpec? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    if trimmed == "off" { return nil }
    let parts = trimmed.split(separator: ",", maxSplits: 1).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    let rate = parts.first?.split(separator: "/") ?? []
    guard rate.count == 2, let count = Int(rate[0]), count > 0,
      let seconds = ["s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600][String(rate[1])]
    else { throw ParseFailure() }
    var burst = count
    if parts.count == 2 {
      guard parts[1].hasPrefix("burst="), let value = Int(parts[1].dropFirst(6)), value > 0
      else { throw ParseFailure() }
      burst = value
    }
    return RateSpec(perSecond: Double(count) / Double(seconds), burst: burst)
  }

  struct ParseFailure: Error {}
}
