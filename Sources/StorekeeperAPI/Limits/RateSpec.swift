import Foundation

/// A token-bucket rate as configured: `N/s`, `N/min` or `N/h`, optionally `,burst=M` (how many
/// requests may come at once after a quiet spell; defaults to N), or `off`. A budget of bytes
/// (`PROOF_BYTES_PER_USER`) may write its amounts with `KB`, `MB` or `GB` (powers of 1000, as
/// the proof's size limit is written): `16MB/h`.
package struct RateSpec: Sendable, Equatable {
  var perSecond: Double
  var burst: Int

  package init(perSecond: Double, burst: Int) {
    self.perSecond = perSecond
    self.burst = burst
  }

  /// nil for `off`; throws a readable problem for anything else it cannot read.
  package static func parse(_ text: String, sizes: Bool = false) throws(ParseFailure) -> RateSpec? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    if trimmed == "off" { return nil }
    let parts = trimmed.split(separator: ",", maxSplits: 1).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    let rate = parts.first?.split(separator: "/") ?? []
    guard rate.count == 2, let count = amount(rate[0], sizes: sizes),
      let seconds = ["s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600][String(rate[1])]
    else { throw ParseFailure() }
    var burst = count
    if parts.count == 2 {
      guard parts[1].hasPrefix("burst="),
        let value = amount(parts[1].dropFirst(6), sizes: sizes)
      else { throw ParseFailure() }
      burst = value
    }
    return RateSpec(perSecond: Double(count) / Double(seconds), burst: burst)
  }

  /// A positive whole number, with a size suffix when `sizes`.
  private static func amount(_ text: Substring, sizes: Bool) -> Int? {
    var digits = text
    var unit = 1
    if sizes {
      for (suffix, factor) in [("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000)]
      where text.hasSuffix(suffix) {
        digits = text.dropLast(suffix.count)
        unit = factor
      }
    }
    guard let value = Int(digits), value > 0 else { return nil }
    let (product, overflow) = value.multipliedReportingOverflow(by: unit)
    return overflow ? nil : product
  }

  package struct ParseFailure: Error {}
}
