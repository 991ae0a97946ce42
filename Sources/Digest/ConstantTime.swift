/// Comparison of secrets (tokens, digests, signatures) whose time does not tell an attacker
/// how much of a guess was right.
package enum ConstantTime {
  /// Whether `a` and `b` hold the same bytes. Every byte of the longer input is read whatever
  /// the first difference, so the time depends on the lengths alone; different lengths are
  /// never equal.
  package static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var difference = UInt64(a.count ^ b.count)
    for index in 0..<max(a.count, b.count) {
      let x = index < a.count ? a[index] : 0
      let y = index < b.count ? b[index] : 0
      difference |= UInt64(x ^ y)
    }
    return difference == 0
  }
}
