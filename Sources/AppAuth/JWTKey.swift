import Digest
import JOSE

/// A key that verifies tokens of exactly one algorithm.
public struct JWTKey: Sendable {
  enum Material: Sendable {
    case secret([UInt8])
    case publicKey(JWKPublicKey)
  }

  public let id: String?
  public let algorithm: JWTAlgorithm
  let material: Material

  /// A shared HS256 secret.
  public static func hmac(secret: [UInt8]) -> JWTKey {
    JWTKey(id: nil, algorithm: .hs256, material: .secret(secret))
  }

  /// Whether `signature` signs `message` under this key with its own algorithm.
  func verifies(signature: [UInt8], message: UnsafeRawBufferPointer) -> Bool {
    switch (algorithm, material) {
    case (.hs256, .secret(let secret)):
      return ConstantTime.equals(HMACSHA256.mac(key: secret, message: message), signature)
    case (.rs256, .publicKey(let key)):
      return key.verify(signature: signature, message: message)
    case (.es256, .publicKey(let key)):
      guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
      return key.verify(signature: der, message: message)
    default:
      return false
    }
  }
}
