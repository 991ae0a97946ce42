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
}
