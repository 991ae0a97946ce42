import COpenSSL

/// One-shot SHA-256 (OpenSSL's `SHA256()`, which needs no provider fetch per call).
public enum SHA256Digest {
  static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    digest.withUnsafeMutableBufferPointer { out in
      _ = SHA256(
        bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, out.baseAddress)
    }
    return digest
  }

  public static func hash(_ bytes: [UInt8]) -> [UInt8] {
    bytes.withUnsafeBytes { hash($0) }
  }
}
