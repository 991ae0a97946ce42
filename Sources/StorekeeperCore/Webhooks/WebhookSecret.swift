import AppStore

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
    return "whsec_" + hex(bytes)
  }

  /// `Storekeeper-Signature`: `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>` with one `v1`
  /// per secret (two while a rotated-out secret still signs).
  package static func signatureHeader(secrets: [String], timestamp: Int64, body: [UInt8]) -> String
  {
    let message = Array("\(timestamp).".utf8) + body
    let signatures = secrets.map { "v1=" + hex(hmacSHA256(key: Array($0.utf8), message: message)) }
    return (["t=\(timestamp)"] + signatures).joined(separator: ",")
  }

  /// HMAC-SHA256 (RFC 2104) over AppStore's one-shot SHA-256, so the domain imports no C.
  static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    let blockSize = 64
    var block = key.count > blockSize ? SHA256Digest.hash(key) : key
    block += [UInt8](repeating: 0, count: blockSize - block.count)
    let inner = SHA256Digest.hash(block.map { $0 ^ 0x36 } + message)
    return SHA256Digest.hash(block.map { $0 ^ 0x5c } + inner)
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
