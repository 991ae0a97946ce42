import Digest

extension Proof {
  /// A signed transaction's JOSE header and what follows it. The header (`alg` and the `x5c`
  /// chain: 2.8 KB of a 3.6 KB transaction) is the same for every transaction Apple signs with
  /// one certificate, so `proof_headers` keeps it once, by its SHA-256, and the proof's row keeps
  /// only `payload.signature`: small enough to stay in the row, where the whole text went to
  /// TOAST (two chunks and an index entry, a third of a settlement's WAL). Nil for other proofs
  /// and for a text that is not three dot-separated parts with a header.
  var sharedHeader: (header: String, hash: String, rest: String)? {
    guard case .signedTransaction(let text) = self else { return nil }
    let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[1].contains(".") else { return nil }
    let header = String(parts[0])
    return (header, SHA256Digest.hex(header), String(parts[1]))
  }
}
