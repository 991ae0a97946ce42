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
    guard case .signedTransaction(let text) = self else { return nil }
    let bytes = text.utf8
    let dot = UInt8(ascii: ".")
    guard let end = bytes.firstIndex(of: dot), end != bytes.startIndex else { return nil }
    let restStart = bytes.index(after: end)
    guard bytes[restStart...].contains(dot) else { return nil }
    let header = String(text[..<end])
    return (header, SHA256Digest.hex(header), String(text[restStart...]))
  }
}
