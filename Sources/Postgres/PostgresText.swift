#if canImport(Glibc)
  import Glibc
#endif

/// What PostgreSQL's `text` can hold: anything but NUL, which libpq's text parameters would
/// also take for their end. Callers refuse such a value rather than let it be truncated.
public enum PostgresText {
  /// Whether `text` holds a NUL character: a zero byte in its UTF-8, the only character whose
  /// encoding has one. Searched with `memchr`, since request bodies and proofs of several
  /// kilobytes pass here on every report.
  public static func containsNUL(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
      guard let start = bytes.baseAddress, !bytes.isEmpty else { return false }
      return memchr(start, 0, bytes.count) != nil
    }
  }
}
