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
  /// scalar it names, so marks written as escapes are counted too; a pair of surrogate escapes
  /// as the one scalar they name (the marks beyond U+FFFF), and a lone surrogate as a mark (it
  /// names none, and must not end a run).
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
    /// The code unit a `\uXXXX` escape at `at` names.
    func escape(at start: Int) -> UInt32? {
      guard start + 5 < text.count, text[start] == UInt8(ascii: "\\"),
        text[start + 1] == UInt8(ascii: "u")
      else { return nil }
      return UInt32(String(decoding: text[(start + 2)...(start + 5)], as: UTF8.self), radix: 16)
    }
    var index = 0
    while index < text.count {
      if text[index] == UInt8(ascii: "\\"), index + 1 < text.count {
        if let unit = escape(at: index) {
          index += 6
          var value = unit
          if (0xD800...0xDBFF).contains(unit), let low = escape(at: index),
            (0xDC00...0xDFFF).contains(low)
          {
            value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            index += 6
          }
          if (0xD800...0xDFFF).contains(value) {
            run += 1
            guard run <= maxNonStarters else { return false }
          } else {
            guard note(Unicode.Scalar(value)) else { return false }
          }
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
