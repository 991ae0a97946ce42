import COpenSSL
import Digest
import JOSE

/// An OpenSSL public key. Read-only after creation, so threads may verify with it at once
/// (each verification makes its own `EVP_PKEY_CTX`).
final class PublicKey: @unchecked Sendable {
  let pointer: OpaquePointer

  init(owning pointer: OpaquePointer) {
    self.pointer = pointer
  }

  deinit { EVP_PKEY_free(pointer) }

  var isP256: Bool { Self.isP256(pointer) }

  /// Whether an OpenSSL key (public or private) is on the P-256 curve.
  static func isP256(_ pointer: OpaquePointer) -> Bool {
    guard EVP_PKEY_is_a(pointer, "EC") == 1 else { return false }
    var name = [CChar](repeating: 0, count: 64)
    var length = 0
    guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
      ERR_clear_error()
      return false
    }
    let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return group == "prime256v1" || group == "P-256"
  }

  /// Checks an ES256 signature: SHA-256 over `message`, JWS's raw R‖S turned into DER.
  func verifyES256(signature raw: [UInt8], message: UnsafeRawBufferPointer) -> Bool {
    guard let der = ECDSASignature.der(fromRaw: raw) else { return false }
    let digest = SHA256Digest.hash(message)
    guard let context = EVP_PKEY_CTX_new(pointer, nil) else {
      ERR_clear_error()
      return false
    }
    defer { EVP_PKEY_CTX_free(context) }
    guard EVP_PKEY_verify_init(context) == 1,
      EVP_PKEY_verify(context, der, der.count, digest, digest.count) == 1
    else {
      ERR_clear_error()
      return false
    }
    return true
  }
}
