/// JSON Schema's `integer`: any JSON number whose value is a whole number, however it is written
/// (`4`, `4.0`, `4.00`, `4e0`, `40e-1`). `4.5` is not one.
package enum JSONInteger: Equatable {
  case value(Int64)
  /// A whole number beyond 64 bits.
  case outOfRange
  case notAnInteger

  /// Reads a JSON number as written (`-? int frac? exp?`; the parser has checked the grammar).
  /// One pass over the bytes: a client controls the text (up to the body's limit), so nothing
  /// here may cost more than linear time in it.
  package init(_ number: String) {
    if let plain = Int64(number) {
      self = .value(plain)
      return
    }
    let bytes = Array(number.utf8)
    let negative = bytes.first == UInt8(ascii: "-")
    let start = negative ? 1 : 0
    let e =
      bytes[start...].firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
      ?? bytes.count
    var digits: [UInt8] = []
    digits.reserveCapacity(e - start)
    var fractionDigits = 0
    var inFraction = false
    for byte in bytes[start..<e] {
      if byte == UInt8(ascii: ".") {
        inFraction = true
      } else {
        digits.append(byte)
        if inFraction { fractionDigits += 1 }
      }
    }
    // The value is digits × 10^(exponent − fractionDigits).
    guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }),
      let last = digits.lastIndex(where: { $0 != UInt8(ascii: "0") })
    else {
      self = .value(0)
      return
    }
    let significant = digits[first...last]
    let trailingZeros = digits.count - 1 - last
    var exponentBytes = e < bytes.count ? bytes[(e + 1)...] : []
    if exponentBytes.first == UInt8(ascii: "+") { exponentBytes = exponentBytes.dropFirst() }
    let exponentText = String(decoding: exponentBytes, as: UTF8.self)
    guard let exponent = Int(exponentText.isEmpty ? "0" : exponentText) else {
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
        (negative ? "-" : "") + String(decoding: significant, as: UTF8.self)
          + String(repeating: "0", count: scale))
    else {
      self = .outOfRange
      return
    }
    self = .value(whole)
  }
}
