import COpenSSL

/// An RSA private key read from PEM (a service account key file's `private_key`, PKCS#8).
/// Owns the OpenSSL key; read-only after loading, and each signature makes its own context, so
/// one instance is shared across threads.
public final class RSAPrivateKey: @unchecked Sendable {
  private let pointer: OpaquePointer

  /// Nil when `pem` holds no RSA private key of at least 2048 bits (RFC 7518 §3.3).
  public init?(pem: String) {
    let bytes = Array(pem.utf8)
    // The memory BIO reads the buffer in place: it must outlive the read, so both happen
    // inside one `withUnsafeBufferPointer` (an array passed straight to the call would be a
    // pointer valid for that call only, which a release build reuses at once).
    let read = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
      guard let base = buffer.baseAddress, let bio = BIO_new_mem_buf(base, Int32(buffer.count))
      else { return nil }
      defer { BIO_free(bio) }
      return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
    guard let key = read else {
      ERR_clear_error()
      return nil
    }
    guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA, EVP_PKEY_get_bits(key) >= 2048 else {
      EVP_PKEY_free(key)
      return nil
    }
    pointer = key
  }

  deinit { EVP_PKEY_free(pointer) }

  /// RS256: RSASSA-PKCS1-v1_5 over SHA-256 of `message`. Nil if OpenSSL fails.
  public func signRS256(_ message: [UInt8]) -> [UInt8]? {
    guard let context = EVP_MD_CTX_new() else { return nil }
    defer {
      EVP_MD_CTX_free(context)
      ERR_clear_error()
    }
    guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return nil }
    var length = 0
    guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else {
      return nil
    }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
      return nil
    }
    return Array(signature.prefix(length))
  }
}
