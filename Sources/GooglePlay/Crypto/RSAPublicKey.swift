import COpenSSL

/// An RSA public key built from a JWK's `n` and `e` with OpenSSL 3's `EVP_PKEY_fromdata`, to
/// check RS256 signatures (Google's OIDC push tokens). Read-only after creation, so threads
/// may verify with it at once (each verification makes its own `EVP_MD_CTX`).
final class RSAPublicKey: @unchecked Sendable {
  private let pointer: OpaquePointer

  private init(owning pointer: OpaquePointer) { self.pointer = pointer }

  deinit { EVP_PKEY_free(pointer) }

  /// Keys under 2048 bits are refused (RFC 7518 §3.3).
  static func make(modulus: [UInt8], exponent: [UInt8]) -> RSAPublicKey? {
    let significant = Array(modulus.drop { $0 == 0 })
    guard significant.count >= 256, significant.count <= 1024, !exponent.isEmpty,
      exponent.count <= 8
    else { return nil }
    defer { ERR_clear_error() }
    // The builder keeps pointers to the names until it builds: C strings that live until then.
    guard let nName = strdup("n") else { return nil }
    defer { free(nName) }
    guard let eName = strdup("e") else { return nil }
    defer { free(eName) }
    guard let builder = OSSL_PARAM_BLD_new() else { return nil }
    defer { OSSL_PARAM_BLD_free(builder) }
    guard let n = BN_bin2bn(significant, Int32(significant.count), nil) else { return nil }
    defer { BN_free(n) }
    guard let e = BN_bin2bn(exponent, Int32(exponent.count), nil) else { return nil }
    defer { BN_free(e) }
    guard OSSL_PARAM_BLD_push_BN(builder, nName, n) == 1,
      OSSL_PARAM_BLD_push_BN(builder, eName, e) == 1,
      let params = OSSL_PARAM_BLD_to_param(builder)
    else { return nil }
    defer { OSSL_PARAM_free(params) }
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_fromdata_init(context) == 1,
      EVP_PKEY_fromdata(context, &key, publicKeySelection, params) == 1, let key
    else { return nil }
    return RSAPublicKey(owning: key)
  }

  /// `EVP_PKEY_PUBLIC_KEY`, a macro Swift cannot import: the public key and its parameters.
  private static let publicKeySelection =
    OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS
    | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS

  /// Whether `signature` is an RS256 (PKCS #1 v1.5, SHA-256) signature of `message`.
  func verifyRS256(signature: [UInt8], message: [UInt8]) -> Bool {
    guard let context = EVP_MD_CTX_new() else { return false }
    defer {
      EVP_MD_CTX_free(context)
      ERR_clear_error()
    }
    guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
    return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
  }
}
