import COpenSSL

/// SHA-256 of a presented admin token, compared with the digests `ADMIN_TOKENS` may hold.
enum TokenDigest {
  static func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    bytes.withUnsafeBufferPointer { input in
      digest.withUnsafeMutableBufferPointer { output in
        _ = SHA256(input.baseAddress, input.count, output.baseAddress)
      }
    }
    return digest
  }
}
