import COpenSSL
import JOSE

/// ES256 signing with an OpenSSL P-256 private key: ECDSA over SHA-256, as the DER OpenSSL
/// produces (promotional offers want it so) or as the 64-byte R‖S a JWS carries.
public enum ES256Signer {
  /// Nil if OpenSSL fails. `key` is an `EVP_PKEY` the caller owns.
  public static func sign(_ message: [UInt8], with key: OpaquePointer) -> [UInt8]? {
    signDER(message, with: key).flatMap(ECDSASignature.raw(fromDER:))
  }

  /// The DER `ECDSA-Sig-Value`. Nil if OpenSSL fails. `key` is an `EVP_PKEY` the caller owns.
  public static func signDER(_ message: [UInt8], with key: OpaquePointer) -> [UInt8]? {
    guard let context = EVP_MD_CTX_new() else { return nil }
    defer { EVP_MD_CTX_free(context) }
    var length = 0
    guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
      EVP_DigestSign(context, nil, &length, message, message.count) == 1
    else {
      ERR_clear_error()
      return nil
    }
    var der = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else {
      ERR_clear_error()
      return nil
    }
    return Array(der.prefix(length))
  }
}
