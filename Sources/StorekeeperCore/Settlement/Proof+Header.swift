#if canImport(Glibc)
  import Glibc
#endif
import Digest

extension Proof {
  /// A signed transaction's JOSE header and what follows it. The header (`alg` and the `x5c`
  /// chain: 2.8 KB of a 3.6 KB transaction) is the same for every transaction Apple signs with
  /// one certificate, so `proof_headers` keeps it once, by its SHA-256, and the proof's row keeps
  /// only `payload.signature`: small enough to stay in the row, where the whole text went to
  /// TOAST (two chunks and an index entry, a third of a settlement's WAL). Nil for other proofs
  /// and for a text that is not three dot-separated parts with a header. Found on the UTF-8
  /// bytes: splitting the text by `Character` walked its grapheme clusters and cost a tenth of
  /// the server's CPU per report.
  var sharedHeader: (header: String, hash: String, rest: String)? {
    guard case .signedTransaction(var text) = self, let end = Self.headerEnd(&text), end > 0
    else { return nil }
    let bytes = text.utf8
    let header = String(decoding: bytes.prefix(end), as: UTF8.self)
    let rest = String(decoding: bytes.dropFirst(end + 1), as: UTF8.self)
    return (header, SHA256Digest.hex(header), rest)
  }

  /// The byte offset of the text's first dot when another follows it, found with `memchr`:
  /// the header alone is 2.8 KB.
  private static func headerEnd(_ text: inout String) -> Int? {
    text.withUTF8 { bytes in
      let dot = Int32(UInt8(ascii: "."))
      guard let start = bytes.baseAddress, let first = memchr(start, dot, bytes.count) else {
        return nil
      }
      let end = UnsafeRawPointer(start).distance(to: UnsafeRawPointer(first))
      guard memchr(first + 1, dot, bytes.count - end - 1) != nil else { return nil }
      return end
    }
  }
}
