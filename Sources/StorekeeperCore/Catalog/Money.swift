/// Exact decimal money as text and integer minor units: never a floating-point number.
package enum Money {
  /// Up to 12 integer digits keeps every amount (× quantity 10) well inside Int64 minor units.
  package static let maxIntegerDigits = 12

  package enum Problem: Error, Equatable {
    case notADecimal
    case tooManyFractionDigits(allowed: Int)
    case tooLarge
  }

  /// Parses a non-negative decimal such as "6", "6.5" or "6.00" into minor units of a currency
  /// with `exponent` fraction digits.
  package static func minorUnits(_ text: String, exponent: Int) throws(Problem) -> Int64 {
    let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let integer = parts[0]
    let fraction = parts.count > 1 ? parts[1] : ""
    let isDigits = { (s: Substring) in s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
    guard !integer.isEmpty, isDigits(integer), isDigits(fraction),
      parts.count == 1 || !fraction.isEmpty
    else { throw .notADecimal }
    guard fraction.count <= exponent else { throw .tooManyFractionDigits(allowed: exponent) }
    let significant = integer.drop(while: { $0 == "0" })
    guard significant.count <= maxIntegerDigits else { throw .tooLarge }
    var units = Int64(significant) ?? 0
    for _ in 0..<exponent { units *= 10 }
    var scale: Int64 = 1
    for _ in 0..<(exponent - fraction.count) { scale *= 10 }
    units += (Int64(fraction) ?? 0) * scale
    return units
  }

  /// Formats minor units with exactly `exponent` fraction digits ("600" → "6.00").
  package static func format(minorUnits: Int64, exponent: Int) -> String {
    guard exponent > 0 else { return String(minorUnits) }
    var divisor: Int64 = 1
    for _ in 0..<exponent { divisor *= 10 }
    let whole = minorUnits / divisor
    let fraction = String(minorUnits % divisor)
    return "\(whole)." + String(repeating: "0", count: exponent - fraction.count) + fraction
  }

  /// Decimal text ("6", "6.5", "0.125") with at least `exponent` fraction digits ("6.00",
  /// "6.50", "0.125"): a sum of store prices, exact to a thousandth (App Store) or a millionth
  /// (Google Play), is trimmed in SQL and written back with its currency's digits here.
  package static func padded(_ text: String, exponent: Int) -> String {
    let fraction = text.split(separator: ".", maxSplits: 1).dropFirst().first?.count ?? 0
    guard fraction < exponent else { return text }
    return (fraction == 0 ? text + "." : text) + String(repeating: "0", count: exponent - fraction)
  }
}
