import COpenSSL
import Foundation

/// A public key built from a JWK's numbers (RSA `n`/`e`, P-256 `x`/`y`) with OpenSSL 3's
/// `EVP_PKEY_fromdata`. Read-only after creation, so threads may verify with it at once (each
/// verification makes its own `EVP_MD_CTX`).
final class JWKPublicKey: @unchecked Sendable {
  private let pointer: OpaquePointer

  private init(owning pointer: OpaquePointer) { self.pointer = pointer }

  deinit { EVP_PKEY_free(pointer) }

  /// RSA keys under 2048 bits are refused (RFC 7518 §3.3).
  static func rsa(modulus: [UInt8], exponent: [UInt8]) -> JWKPublicKey? {
    let significant = Array(modulus.drop { $0 == 0 })
    guard significant.count >= 256, significant.count <= 1024, !exponent.isEmpty,
      exponent.count <= 8
    else { return nil }
    return build(type: "RSA", names: ["n", "e"]) { builder, names, owned in
      guard let n = BN_bin2bn(significant, Int32(significant.count), nil) else { return false }
      owned.append(n)
      guard let e = BN_bin2bn(exponent, Int32(exponent.count), nil) else { return false }
      owned.append(e)
      return OSSL_PARAM_BLD_push_BN(builder, names[0], n) == 1
        && OSSL_PARAM_BLD_push_BN(builder, names[1], e) == 1
    }
  }

  /// A point on P-256 (OpenSSL refuses one that is not on the curve).
  static func p256(x: [UInt8], y: [UInt8]) -> JWKPublicKey? {
    guard x.count == 32, y.count == 32 else { return nil }
    let point = [0x04] + x + y
    return build(type: "EC", names: ["group", "pub", "prime256v1"]) { builder, names, _ in
      OSSL_PARAM_BLD_push_utf8_string(builder, names[0], names[2], 0) == 1
        && point.withUnsafeBytes {
          OSSL_PARAM_BLD_push_octet_string(builder, names[1], $0.baseAddress, $0.count)
        } == 1
    }
  }

  /// Runs `push` against a parameter builder and imports the result as a public key. The
  /// builder keeps pointers to the names it is given until it builds, so they are C strings
  /// that live until then; big numbers `push` appends to `owned` are freed afterwards too.
  private static func build(
    type: String, names: [String],
    _ push: (OpaquePointer, [UnsafePointer<CChar>], inout [OpaquePointer]) -> Bool
  ) -> JWKPublicKey? {
    defer { ERR_clear_error() }
    let copies = names.compactMap { strdup($0) }
    defer { copies.forEach { free($0) } }
    guard copies.count == names.count, let builder = OSSL_PARAM_BLD_new() else { return nil }
    defer { OSSL_PARAM_BLD_free(builder) }
    var owned: [OpaquePointer] = []
    defer { owned.forEach { BN_free($0) } }
    guard push(builder, copies.map { UnsafePointer($0) }, &owned),
      let params = OSSL_PARAM_BLD_to_param(builder)
    else { return nil }
    defer { OSSL_PARAM_free(params) }
    guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_fromdata_init(context) == 1,
      EVP_PKEY_fromdata(context, &key, Self.publicKeySelection, params) == 1, let key
    else { return nil }
    return JWKPublicKey(owning: key)
  }

  /// `EVP_PKEY_PUBLIC_KEY`, a macro Swift cannot import: the public key and its parameters.
  private static let publicKeySelection =
    OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS
    | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS

  /// RS256 (PKCS #1 v1.5) or ES256 (DER, converted from JWS's R‖S by the caller) over SHA-256.
  func verify(signature: [UInt8], message: UnsafeRawBufferPointer) -> Bool {
    guard let context = EVP_MD_CTX_new() else { return false }
    defer {
      EVP_MD_CTX_free(context)
      ERR_clear_error()
    }
    guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
    return signature.withUnsafeBufferPointer { signature in
      EVP_DigestVerify(
        context, signature.baseAddress, signature.count,
        message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
    }
  }
}
