import COpenSSL

/// HMAC-SHA-256 and a comparison whose time does not depend on where the bytes differ.
public enum HMACSHA256 {
  static func mac(key: [UInt8], message: UnsafeRawBufferPointer) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    key.withUnsafeBytes { key in
      out.withUnsafeMutableBufferPointer { out in
        _ = HMAC(
          EVP_sha256(), key.baseAddress, Int32(key.count),
          message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
          out.baseAddress, &length)
      }
    }
    return out
  }

  /// Compares every byte of the longer input whatever the first difference.
  public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var difference = UInt64(a.count ^ b.count)
    for index in 0..<max(a.count, b.count) {
      let x = index < a.count ? a[index] : 0
      let y = index < b.count ? b[index] : 0
      difference |= UInt64(x ^ y)
    }
    return difference == 0
  }

  /// One-shot SHA-256 (API keys are kept as their digests).
  public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    bytes.withUnsafeBufferPointer { input in
      digest.withUnsafeMutableBufferPointer { out in
        _ = SHA256(input.baseAddress, input.count, out.baseAddress)
      }
    }
    return digest
  }
}
