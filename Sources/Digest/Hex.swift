/// Lowercase hexadecimal, as digests and signatures are printed and configured.
package enum Hex {
  private static let digits = Array("0123456789abcdef".utf8)

  /// Two lowercase hex digits per byte.
  package static func encode(_ bytes: some Sequence<UInt8>) -> String {
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
