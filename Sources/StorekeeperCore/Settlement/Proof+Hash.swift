import AppStore
import Digest

extension Proof {
  /// The SHA-256 of the proof's text, in hex: its key in `proofs` and how a repeated report is
  /// recognised. Computed here so the text crosses to PostgreSQL once, not once more to hash it.
  var hash: String { SHA256Digest.hex(text) }
}
