import COpenSSL

/// A P-256 private key read from PEM (an App Store Connect `.p8` file is PKCS#8 PEM). Owns the
/// OpenSSL key; read-only after loading, and each signature makes its own context, so one
/// instance is shared across threads.
public final class P256PrivateKey: @unchecked Sendable {
  private let pointer: OpaquePointer

  /// Nil when `pem` holds no P-256 private key.
  public init?(pem: String) {
    // The BIO reads the bytes in place, so the PEM is read while the buffer is still lent
    // out: a pointer that outlives its closure may already be freed in an optimized build.
    let bytes = Array(pem.utf8)
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
    guard PublicKey.isP256(key) else {
      EVP_PKEY_free(key)
      return nil
    }
    pointer = key
  }

  deinit { EVP_PKEY_free(pointer) }

  /// ECDSA over SHA-256 of `message`, DER-encoded (`ECDSA-Sig-Value`). Nil if OpenSSL fails.
  public func signDER(_ message: [UInt8]) -> [UInt8]? {
    ES256Signer.signDER(message, with: pointer)
  }

  /// The same signature as the 64-byte R‖S a JWS carries. Nil if OpenSSL fails.
  public func signES256(_ message: [UInt8]) -> [UInt8]? { ES256Signer.sign(message, with: pointer) }
}
