import COpenSSL

/// A signing secret: `whsec_` and 32 random bytes from the system CSPRNG (getrandom(2)) in
/// hex. The whole string, as UTF-8, is the HMAC key a receiver uses.
enum WebhookSecret {
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
  static func signatureHeader(secrets: [String], timestamp: Int64, body: [UInt8]) -> String {
    let message = Array("\(timestamp).".utf8) + body
    let signatures = secrets.map { "v1=" + hex(hmacSHA256(key: Array($0.utf8), message: message)) }
    return (["t=\(timestamp)"] + signatures).joined(separator: ",")
  }

  static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    key.withUnsafeBufferPointer { key in
      message.withUnsafeBufferPointer { message in
        out.withUnsafeMutableBufferPointer { out in
          _ = HMAC(
            EVP_sha256(), key.baseAddress, Int32(key.count), message.baseAddress, message.count,
            out.baseAddress, &length)
        }
      }
    }
    return out
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
