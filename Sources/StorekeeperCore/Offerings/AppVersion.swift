/// An app's version as it reports it (`CFBundleShortVersionString`, Android's `versionName`):
/// 1 to 4 dot-separated numbers, compared number by number, a missing one counting as 0
/// (`2.0` equals `2.0.0`).
package struct AppVersion: Sendable, Comparable, CustomStringConvertible {
  /// Without trailing zeros, for comparing.
  let parts: [UInt32]
  /// As written, for showing back.
  package let description: String

  /// One pass over the bytes: apps send it with every request, so parsing it is on the
  /// offerings' hot path (a generic `split` cost more than the rest of the route).
  package init?(_ text: String) {
    var parts: [UInt32] = []
    parts.reserveCapacity(4)
    var value: UInt32 = 0
    var digits = 0
    for byte in text.utf8 {
      if byte == UInt8(ascii: ".") {
        guard digits > 0, parts.count < 3 else { return nil }
        parts.append(value)
        value = 0
        digits = 0
      } else {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 else { return nil }
        value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
        digits += 1
      }
    }
    guard digits > 0 else { return nil }
    parts.append(value)
    while parts.count > 1 && parts.last == 0 { parts.removeLast() }
    self.parts = parts
    description = text
  }

  package static func < (lhs: AppVersion, rhs: AppVersion) -> Bool {
    for index in 0..<max(lhs.parts.count, rhs.parts.count) {
      let left = index < lhs.parts.count ? lhs.parts[index] : 0
      let right = index < rhs.parts.count ? rhs.parts[index] : 0
      if left != right { return left < right }
    }
    return false
  }

  package static func == (lhs: AppVersion, rhs: AppVersion) -> Bool { !(lhs < rhs || rhs < lhs) }
}
