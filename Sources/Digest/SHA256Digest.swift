import COpenSSL

/// One-shot SHA-256 (FIPS 180-4) on a stack context through OpenSSL's low-level functions
/// (`storekeeper_sha256` in the COpenSSL shim), not `SHA256()`: in OpenSSL 3 that is
/// `EVP_Q_digest`, a provider fetch under a lock and an allocated context per call, which
/// profiled at about 1 µs of every offering request an experiment decides. Proof keys,
/// migration checksums, certificate-chain fingerprints, the digests API keys and admin tokens
/// are configured as, and the message ES256 signs.
package enum SHA256Digest {
  /// The length of a digest in bytes.
  package static let byteCount = 32

  package static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: byteCount)
    digest.withUnsafeMutableBufferPointer { out in
      COpenSSL.storekeeper_sha256(bytes.baseAddress, bytes.count, out.baseAddress)
    }
    return digest
  }

  /// Writes the digest of `bytes` into `digest` (at least `byteCount` bytes), for hot paths
  /// that keep it on the stack rather than in a new array.
  package static func hash(
    _ bytes: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer
  ) {
    precondition(digest.count >= byteCount, "a SHA-256 digest is 32 bytes")
    COpenSSL.storekeeper_sha256(
      bytes.baseAddress, bytes.count, digest.baseAddress?.assumingMemoryBound(to: UInt8.self))
  }

  /// The digest of any bytes (`[UInt8]`, `ArraySlice`, `Data`), read in place when they are
  /// contiguous.
  package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
    if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
      return digest
    }
    return Array(bytes).withUnsafeBytes { hash($0) }
  }

  /// The digest of the text's UTF-8.
  package static func hash(_ text: some StringProtocol) -> [UInt8] {
    hash(text.utf8)
  }

  /// The digest as 64 lowercase hex digits.
  package static func hex(_ bytes: UnsafeRawBufferPointer) -> String { Hex.encode(hash(bytes)) }

  /// The digest as 64 lowercase hex digits.
  package static func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(hash(bytes)) }

  /// The digest of the text's UTF-8 as 64 lowercase hex digits.
  package static func hex(_ text: some StringProtocol) -> String { Hex.encode(hash(text)) }
}
