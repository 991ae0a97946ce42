import COpenSSL

/// An App Store Connect in-app purchase key (the `.p8` file App Store Connect hands out: a
/// PKCS#8 PEM P-256 private key) with its key id and issuer id. Owns the OpenSSL key.
public final class AppStoreAPIKey: @unchecked Sendable {
  // Read-only after loading; each signature makes its own context.
  private let pointer: OpaquePointer
  public let keyId: String
  public let issuerId: String

  /// Nil when `pem` holds no P-256 private key.
  public init?(pem: String, keyId: String, issuerId: String) {
    let bytes = Array(pem.utf8)
    guard let bio = BIO_new_mem_buf(bytes, Int32(bytes.count)) else { return nil }
    defer { BIO_free(bio) }
    guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
      ERR_clear_error()
      return nil
    }
    guard PublicKey.isP256(key) else {
      EVP_PKEY_free(key)
      return nil
    }
    pointer = key
    self.keyId = keyId
    self.issuerId = issuerId
  }

  deinit { EVP_PKEY_free(pointer) }

  /// ES256 over `message`: the 64-byte R‖S a JWS carries. Nil if OpenSSL fails.
  func signES256(_ message: [UInt8]) -> [UInt8]? { ES256Signer.sign(message, with: pointer) }
}
