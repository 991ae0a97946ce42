/// Text whose runs of combining marks are short: UAX #15's stream-safe format, at most 30
/// non-starters (scalars of a non-zero canonical combining class) in a row.
///
/// Swift compares and hashes `String` by canonical equivalence, which puts each run of
/// combining marks in canonical order: quadratic in the run's length. One client-sent key or
/// header value of "a" and 16 KiB of marks cost a dictionary insert or a `==` hundreds of
/// milliseconds, a 1 MiB JSON key minutes. No language needs more than 30 in a row, so text
/// from a peer is refused before it is hashed or compared.
public enum StreamSafeText {
  public static let maxNonStarters = 30

  // Inlinable: unspecialized across modules, the generic byte scan went through protocol
  // witnesses per byte and cost a catalog read about 5% of its CPU in header values alone.
  @inlinable
  public static func isStreamSafe(_ text: some StringProtocol) -> Bool {
    // U+0300, the first scalar with a combining class, begins with 0xCC in UTF-8: text below
    // it (all of ASCII and Latin-1) is safe without decoding a scalar.
    guard text.utf8.contains(where: { $0 >= 0xCC }) else { return true }
    var run = 0
    for scalar in text.unicodeScalars {
      if scalar.value >= 0x300 && scalar.properties.canonicalCombiningClass.rawValue != 0 {
        run += 1
        if run > maxNonStarters { return false }
      } else {
        run = 0
      }
    }
    return true
  }

  /// `isStreamSafe` of JSON text as a decoder will see it: a `\uXXXX` escape counts as the
  /// scalar it names, so marks written as escapes are counted too.
  @inlinable
  public static func isStreamSafe(json bytes: some Collection<UInt8>) -> Bool {
    guard bytes.contains(where: { $0 >= 0xCC || $0 == UInt8(ascii: "\\") }) else { return true }
    let text = Array(bytes)
    var run = 0
    func note(_ scalar: Unicode.Scalar?) -> Bool {
      if let scalar, scalar.value >= 0x300,
        scalar.properties.canonicalCombiningClass.rawValue != 0
      {
        run += 1
        return run <= maxNonStarters
      }
      run = 0
      return true
    }
    var index = 0
    while index < text.count {
      if text[index] == UInt8(ascii: "\\"), index + 1 < text.count {
        if text[index + 1] == UInt8(ascii: "u"), index + 5 < text.count,
          let value = UInt32(
            String(decoding: text[(index + 2)...(index + 5)], as: UTF8.self), radix: 16)
        {
          guard note(Unicode.Scalar(value)) else { return false }
          index += 6
        } else {
          guard note(nil) else { return false }
          index += 2
        }
        continue
      }
      // One scalar of UTF-8 from here (invalid bytes count as a starter; the decoder refuses
      // them anyway).
      var decoder = UTF8()
      var bytesLeft = text[index...].makeIterator()
      switch decoder.decode(&bytesLeft) {
      case .scalarValue(let scalar):
        guard note(scalar) else { return false }
        index += UTF8.width(scalar)
      case .emptyInput:
        index = text.count
      case .error:
        guard note(nil) else { return false }
        index += 1
      }
    }
    return true
  }
}
