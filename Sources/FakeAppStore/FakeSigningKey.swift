import AppStore
import COpenSSL
import JOSE

/// A P-256 private key, owned; signs ES256 the way Apple does (raw R‖S).
final class FakeSigningKey: @unchecked Sendable {
  // Read-only after generation; each signature makes its own context.
  let pointer: OpaquePointer

  init() throws {
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
      throw FakeCryptoError("EVP_PKEY_CTX_new_from_name")
    }
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1,
      EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
      EVP_PKEY_generate(context, &key) == 1, let key
    else {
      ERR_clear_error()
      throw FakeCryptoError("EVP_PKEY_generate P-256")
    }
    pointer = key
  }

  deinit { EVP_PKEY_free(pointer) }

  /// ES256: ECDSA P-256 over SHA-256, as the 64-byte R‖S JWS wants.
  func signES256(_ message: [UInt8]) throws -> [UInt8] {
    guard let signature = ES256Signer.sign(message, with: pointer) else {
      throw FakeCryptoError("ES256 signature")
    }
    return signature
  }

  /// The private key as App Store Connect hands it out: PKCS#8 PEM (a `.p8` file).
  func privateKeyPEM() throws -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw FakeCryptoError("BIO_new") }
    defer { BIO_free(bio) }
    guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
      ERR_clear_error()
      throw FakeCryptoError("PEM_write_bio_PrivateKey")
    }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = BIO_read(bio, &bytes, Int32(bytes.count))
    guard count > 0 else { throw FakeCryptoError("BIO_read") }
    return String(decoding: bytes.prefix(Int(count)), as: UTF8.self)
  }

  /// Checks an ES256 signature (raw R‖S) over `message` with this key's public half.
  func verifyES256(signature raw: [UInt8], message: [UInt8]) -> Bool {
    guard let der = ECDSASignature.der(fromRaw: raw), let context = EVP_MD_CTX_new() else {
      return false
    }
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1,
      EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    else {
      ERR_clear_error()
      return false
    }
    return true
  }
}
