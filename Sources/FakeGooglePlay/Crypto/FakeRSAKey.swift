import COpenSSL
import JOSE

/// A fresh RSA-2048 key pair, owned: what Google would hold for a service account (the fake
/// hands out the private half in a key file and checks assertions with the public one) or for
/// its OIDC tokens (the fake signs, and serves the public half as a JWK).
final class FakeRSAKey: @unchecked Sendable {
  // Read-only after generation; each operation makes its own context.
  private let pointer: OpaquePointer

  init() throws {
    // OpenSSL 3 makes 2048-bit keys unless told otherwise (EVP_RSA_gen is a macro Swift
    // cannot import).
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
      throw FakeCryptoError("EVP_PKEY_CTX_new_from_name RSA")
    }
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_generate(context, &key) == 1, let key,
      EVP_PKEY_get_bits(key) >= 2048
    else {
      ERR_clear_error()
      throw FakeCryptoError("EVP_PKEY_generate RSA")
    }
    pointer = key
  }

  deinit { EVP_PKEY_free(pointer) }

  /// The private key as Google writes it into a key file: PKCS#8 PEM.
  func privateKeyPEM() throws -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw FakeCryptoError("BIO_new") }
    defer { BIO_free(bio) }
    guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
      ERR_clear_error()
      throw FakeCryptoError("PEM_write_bio_PrivateKey")
    }
    var bytes = [UInt8](repeating: 0, count: 8192)
    let count = BIO_read(bio, &bytes, Int32(bytes.count))
    guard count > 0 else { throw FakeCryptoError("BIO_read") }
    return String(decoding: bytes.prefix(Int(count)), as: UTF8.self)
  }

  /// RS256 over `message`.
  func signRS256(_ message: [UInt8]) throws -> [UInt8] {
    guard let context = EVP_MD_CTX_new() else { throw FakeCryptoError("EVP_MD_CTX_new") }
    defer {
      EVP_MD_CTX_free(context)
      ERR_clear_error()
    }
    var length = 0
    guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1,
      EVP_DigestSign(context, nil, &length, message, message.count) == 1
    else { throw FakeCryptoError("EVP_DigestSign") }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
      throw FakeCryptoError("EVP_DigestSign")
    }
    return Array(signature.prefix(length))
  }

  func verifyRS256(signature: [UInt8], message: [UInt8]) -> Bool {
    guard let context = EVP_MD_CTX_new() else { return false }
    defer {
      EVP_MD_CTX_free(context)
      ERR_clear_error()
    }
    return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1
      && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
  }

  /// The public half as a JWK (`n`, `e` base64url), as Google's certs endpoint lists it.
  func publicJWK(kid: String) throws -> [String: String] {
    [
      "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
      "n": Base64URL.encode(try parameter("n")), "e": Base64URL.encode(try parameter("e")),
    ]
  }

  private func parameter(_ name: String) throws -> [UInt8] {
    var number: OpaquePointer?
    guard EVP_PKEY_get_bn_param(pointer, name, &number) == 1, let number else {
      ERR_clear_error()
      throw FakeCryptoError("EVP_PKEY_get_bn_param \(name)")
    }
    defer { BN_free(number) }
    var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
    _ = BN_bn2bin(number, &bytes)
    return bytes
  }
}
