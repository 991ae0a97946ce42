/// JSON Schema's `integer`: any JSON number whose value is a whole number, however it is written
/// (`4`, `4.0`, `4.00`, `4e0`, `40e-1`). `4.5` is not one.
package enum JSONInteger: Equatable {
  case value(Int64)
  /// A whole number beyond 64 bits.
  case outOfRange
  case notAnInteger

  /// Reads a JSON number as written (`-? int frac? exp?`; the parser has checked the grammar).
  package init(_ number: String) {
    if let plain = Int64(number) {
      self = .value(plain)
      return
    }
    var text = Substring(number)
    let negative = text.first == "-"
    if negative { text = text.dropFirst() }
    var exponentText: Substring = "0"
    if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      exponentText = text[text.index(after: e)...]
      text = text[..<e]
    }
    var fractionDigits = 0
    var digits = text
    if let dot = text.firstIndex(of: ".") {
      let fraction = text[text.index(after: dot)...]
      fractionDigits = fraction.count
      digits = Substring(text[..<dot] + fraction)
    }
    // The value is digits × 10^(exponent − fractionDigits).
    var significant = digits.drop(while: { $0 == "0" })
    var trailingZeros = 0
    while significant.last == "0" {
      significant = significant.dropLast()
      trailingZeros += 1
    }
    if significant.isEmpty {
      self = .value(0)
      return
    }
    guard let exponent = Int(exponentText.drop(while: { $0 == "+" })) else {
      // An exponent beyond Int: astronomically large or small.
      self = exponentText.hasPrefix("-") ? .notAnInteger : .outOfRange
      return
    }
    let (unshifted, overflowA) = exponent.subtractingReportingOverflow(fractionDigits)
    let (scale, overflowB) = unshifted.addingReportingOverflow(trailingZeros)
    if overflowA || overflowB {
      self = exponent < 0 ? .notAnInteger : .outOfRange
      return
    }
    guard scale >= 0 else {
      self = .notAnInteger
      return
    }
    guard scale <= 19 - significant.count,
      let whole = Int64(
        (negative ? "-" : "") + significant + String(repeating: "0", count: scale))
    else {
      self = .outOfRange
      return
    }
    self = .value(whole)
  }
}
