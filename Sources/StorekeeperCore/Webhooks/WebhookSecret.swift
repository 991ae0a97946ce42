import Digest

/// A signing secret: `whsec_` and 32 random bytes from the system CSPRNG (getrandom(2)) in
/// hex. The whole string, as UTF-8, is the HMAC key a receiver uses.
package enum WebhookSecret {
  static func generate() -> String {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(32)
    for _ in 0..<4 {
      withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    return "whsec_" + Hex.encode(bytes)
  }

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
}
