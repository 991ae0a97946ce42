import AppStore

extension Proof {
  /// The SHA-256 of the proof's text, in hex: its key in `proofs` and how a repeated report is
  /// recognised. Computed here so the text crosses to PostgreSQL once, not once more to hash it.
  var hash: String {
    let hex: [Character] = Array("0123456789abcdef")
    var out = ""
    out.reserveCapacity(64)
    for byte in SHA256Digest.hash(Array(text.utf8)) {
      out.append(hex[Int(byte >> 4)])
      out.append(hex[Int(byte & 0x0F)])
    }
    return out
  }
}
