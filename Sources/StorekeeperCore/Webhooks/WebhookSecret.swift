import Digest
import Foundation

/// A signing secret: `whsec_` and 32 random bytes from the system CSPRNG (getrandom(2)) in
/// hex. One secret serves both signature schemes a delivery carries:
/// - `Storekeeper-Signature` (Stripe's scheme, which stripe-python's
///   `WebhookSignature.verify_header` checks) keys HMAC-SHA256 with the whole string as UTF-8;
/// - `webhook-signature` (Standard Webhooks) keys it, as that spec derives the key from a
///   `whsec_` secret, with the base64 decoding of what follows the prefix. Hex digits are
///   base64 digits and 64 of them are 16 whole groups, so the 64 hex characters decode, under
///   every Standard Webhooks library, to a 48-byte key (256 bits of randomness; the spec asks
///   for 24 to 64 bytes). The receiver hands the same `whsec_…` string to either library.
package enum WebhookSecret {
  static func generate() -> String {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(32)
    for _ in 0..<4 {
      withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    return prefix + Hex.encode(bytes)
  }

  static let prefix = "whsec_"

  /// `Storekeeper-Signature`: `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>` with one `v1`
  /// per secret (two while a rotated-out secret still signs).
  package static func signatureHeader(secrets: [String], timestamp: Int64, body: [UInt8]) -> String
  {
    let message = Array("\(timestamp).".utf8) + body
    let signatures = secrets.map {
      "v1=" + Hex.encode(HMACSHA256.mac(key: Array($0.utf8), message: message))
    }
    return (["t=\(timestamp)"] + signatures).joined(separator: ",")
  }

  /// Standard Webhooks' `webhook-signature`: `v1,<base64 HMAC-SHA256(key, "id.t.body")>` per
  /// secret, space-separated (the spec's form for a rotation's overlap). A stored secret whose
  /// tail is not base64 (none that `generate` made) signs nothing here rather than something
  /// no library would check; its Storekeeper-Signature still goes out.
  package static func standardSignatureHeader(
    secrets: [String], id: String, timestamp: Int64, body: [UInt8]
  ) -> String {
    let message = Array("\(id).\(timestamp).".utf8) + body
    return secrets.compactMap { secret in
      standardKey(secret).map {
        "v1," + Data(HMACSHA256.mac(key: $0, message: message)).base64EncodedString()
      }
    }.joined(separator: " ")
  }

  /// The Standard Webhooks key of a secret: base64 of what follows `whsec_`.
  static func standardKey(_ secret: String) -> [UInt8]? {
    guard secret.hasPrefix(prefix),
      let key = Data(base64Encoded: String(secret.dropFirst(prefix.utf8.count))), !key.isEmpty
    else { return nil }
    return Array(key)
  }
}
