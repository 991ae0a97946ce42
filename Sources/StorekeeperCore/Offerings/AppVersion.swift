/// An app's version as it reports it (`CFBundleShortVersionString`, Android's `versionName`):
/// 1 to 4 dot-separated numbers, compared number by number, a missing one counting as 0
/// (`2.0` equals `2.0.0`).
package struct AppVersion: Sendable, Comparable, CustomStringConvertible {
  /// The four numbers (missing ones 0), 32 bits each from the most significant: comparing
  /// versions is comparing these, and a version costs no array per request.
  let packed: UInt128
  /// As written, for showing back.
  package let description: String

  /// One pass over the bytes: apps send it with every request, so parsing it is on the
  /// offerings' hot path (a generic `split` cost more than the rest of the route).
  package init?(_ text: String) {
    var packed: UInt128 = 0
    var count = 0
    var value: UInt32 = 0
    var digits = 0
    for byte in text.utf8 {
      if byte == UInt8(ascii: ".") {
        guard digits > 0, count < 3 else { return nil }
        packed = packed << 32 | UInt128(value)
        count += 1
        value = 0
        digits = 0
      } else {
        // At most 9 digits, so a number fits its 32 bits.
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 else { return nil }
        value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
        digits += 1
      }
    }
    guard digits > 0 else { return nil }
    packed = packed << 32 | UInt128(value)
    count += 1
    self.packed = packed << (32 * (4 - count))
    description = text
  }

  package static func < (lhs: AppVersion, rhs: AppVersion) -> Bool { lhs.packed < rhs.packed }

  package static func == (lhs: AppVersion, rhs: AppVersion) -> Bool { lhs.packed == rhs.packed }
}
