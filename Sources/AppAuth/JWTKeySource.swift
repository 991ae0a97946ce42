/// Where the verifier finds the key for a token: a fixed secret, or a JWKS document.
public protocol JWTKeySource: Sendable {
  /// The key with this id (or, without one, the only key) for `algorithm`.
  func key(id: String?, algorithm: JWTAlgorithm) async throws(JWTError) -> JWTKey
}

/// The shared HS256 secret (`APP_JWT_SECRET`): one key, no ids.
public struct StaticKeySource: JWTKeySource {
  let key: JWTKey

  public init(_ key: JWTKey) { self.key = key }

  public func key(id: String?, algorithm: JWTAlgorithm) async throws(JWTError) -> JWTKey {
    guard algorithm == key.algorithm else { throw .unsupportedAlgorithm(algorithm.rawValue) }
    return key
  }
}
