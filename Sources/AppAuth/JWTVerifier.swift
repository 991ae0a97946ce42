import Foundation
import JOSE
import TextSafety

/// Verifies a compact JWS bearer token from the app's own sign-in service and returns its
/// claims: size, shape, algorithm (exactly the key's; never `none`), signature, then issuer,
/// audience, `exp` (required) and `nbf` with a small leeway.
public struct JWTVerifier: Sendable {
  public struct Settings: Sendable {
    public var issuer: String
    public var audience: String
    /// Clock skew allowed on `exp` and `nbf`.
    public var leewaySeconds: Double
    public init(issuer: String, audience: String, leewaySeconds: Double = 30) {
      self.issuer = issuer
      self.audience = audience
      self.leewaySeconds = leewaySeconds
    }
  }

  /// Tokens are a few hundred bytes; a header of kilobytes is an attack or a mistake.
  public static let maxTokenBytes = 8 * 1024

  public let settings: Settings
  public let keys: any JWTKeySource
  let now: @Sendable () -> Double

  public init(
    settings: Settings, keys: any JWTKeySource,
    now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
  ) {
    self.settings = settings
    self.keys = keys
    self.now = now
  }

  /// Whether verifying a token may need real work (public-key arithmetic, a fetch), so a
  /// caller on an event loop should move it off the loop first.
  public var isExpensive: Bool { !(keys is StaticKeySource) }

  public func verify(_ token: String) async throws(JWTError) -> JWTClaims {
    guard token.utf8.count <= Self.maxTokenBytes else { throw .oversize }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .malformed("not three segments") }
    // Read before the signature is checked, by a decoder that hashes its keys: stream-safe
    // first (`StreamSafeText`).
    guard let headerBytes = Base64URL.decode(parts[0]),
      StreamSafeText.isStreamSafe(json: headerBytes),
      let header = try? JSONDecoder().decode(JWTHeader.self, from: Data(headerBytes))
    else { throw .malformed("header") }
    guard let algorithm = JWTAlgorithm(rawValue: header.alg) else {
      throw .unsupportedAlgorithm(header.alg)
    }
    guard header.crit == nil else { throw .malformed("crit") }
    guard let payload = Base64URL.decode(parts[1]) else { throw .malformed("payload") }
    guard let signature = Base64URL.decode(parts[2]) else { throw .malformed("signature") }
    let key = try await keys.key(id: header.kid, algorithm: algorithm)
    guard key.algorithm == algorithm else { throw .unsupportedAlgorithm(header.alg) }
    let signed = token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
    let valid = Array(signed).withUnsafeBytes {
      key.verifies(signature: signature, message: $0)
    }
    guard valid else { throw .badSignature }
    guard let claims = try? JSONDecoder().decode(JWTClaims.self, from: Data(payload)) else {
      throw .malformed("claims")
    }
    try check(claims)
    return claims
  }

  private func check(_ claims: JWTClaims) throws(JWTError) {
    let now = now()
    guard let exp = claims.exp else { throw .missingClaim("exp") }
    guard now < exp + settings.leewaySeconds else { throw .expired }
    if let nbf = claims.nbf, now + settings.leewaySeconds < nbf { throw .notYetValid }
    guard claims.iss == settings.issuer else { throw .wrongIssuer }
    guard claims.aud.contains(settings.audience) else { throw .wrongAudience }
    guard let sub = claims.sub, !sub.isEmpty else { throw .missingClaim("sub") }
  }
}
