import COpenSSL

/// HMAC-SHA256 (RFC 2104) through OpenSSL's one-shot `HMAC()`: HS256 tokens, webhook
/// signatures, and the fake App Store's algorithm-confusion forgery.
package enum HMACSHA256 {
  /// The length of a code in bytes.
  package static let byteCount = 32

  package static func mac(key: [UInt8], message: UnsafeRawBufferPointer) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: byteCount)
    var length: UInt32 = 0
    // An empty key is a valid key, but OpenSSL reads a NULL one as "no key given" and fails:
    // point it at a byte it reads none of.
    var none: UInt8 = 0
    let computed = key.withUnsafeBytes { key in
      out.withUnsafeMutableBufferPointer { out in
        withUnsafePointer(to: &none) { none in
          HMAC(
            EVP_sha256(), key.baseAddress ?? UnsafeRawPointer(none), Int32(key.count),
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
            out.baseAddress, &length) != nil
        }
      }
    }
    // Only a broken OpenSSL (no default provider) fails here; a zero code would verify a
    // forged all-zero signature, so stop instead.
    precondition(computed && length == byteCount, "OpenSSL could not compute HMAC-SHA256")
    return out
  }

  /// The code of any bytes (`[UInt8]`, `ArraySlice`, `Data`), read in place when they are
  /// contiguous.
  package static func mac(key: [UInt8], message: some Sequence<UInt8>) -> [UInt8] {
    if let code = message.withContiguousStorageIfAvailable({
      mac(key: key, message: UnsafeRawBufferPointer($0))
    }) {
      return code
    }
    return Array(message).withUnsafeBytes { mac(key: key, message: $0) }
  }
}
