/// An App Store Connect in-app purchase key (the `.p8` file App Store Connect hands out: a
/// PKCS#8 PEM P-256 private key) with its key id and issuer id.
public final class AppStoreAPIKey: Sendable {
  public let key: P256PrivateKey
  public let keyId: String
  public let issuerId: String

  /// Nil when `pem` holds no P-256 private key.
  public init?(pem: String, keyId: String, issuerId: String) {
    guard let key = P256PrivateKey(pem: pem) else { return nil }
    self.key = key
    self.keyId = keyId
    self.issuerId = issuerId
  }

  /// ES256 over `message`: the 64-byte R‖S a JWS carries. Nil if OpenSSL fails.
  func signES256(_ message: [UInt8]) -> [UInt8]? { key.signES256(message) }
}
