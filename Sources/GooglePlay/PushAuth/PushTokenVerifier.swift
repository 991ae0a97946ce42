import Foundation
import JOSE
import TextSafety

/// Checks the OIDC token Pub/Sub sends with each push (`Authorization: Bearer`): RS256 under a
/// key of Google's JWKS, `iss` Google's, `aud` the audience configured on the push
/// subscription (`GOOGLE_PUBSUB_AUDIENCE`), `email` the subscription's service account
/// (`GOOGLE_PUBSUB_SERVICE_ACCOUNT`) with `email_verified`, and `exp`/`iat` with a small
/// leeway. Without the email check any Google principal could mint an accepted token.
public struct PushTokenVerifier: Sendable {
  public struct Settings: Sendable {
    public var audience: String
    public var serviceAccountEmail: String
    public var issuers: Set<String>
    public var leewaySeconds: Int64

    public init(
      audience: String, serviceAccountEmail: String,
      issuers: Set<String> = ["accounts.google.com", "https://accounts.google.com"],
      leewaySeconds: Int64 = 60
    ) {
      self.audience = audience
      self.serviceAccountEmail = serviceAccountEmail
      self.issuers = issuers
      self.leewaySeconds = leewaySeconds
    }
  }

  /// Google's ID tokens are about a kilobyte.
  public static let maxTokenBytes = 8 * 1024

  public let settings: Settings
  public let keys: PushKeySource
  let now: @Sendable () -> Date

  public init(
    settings: Settings, keys: PushKeySource, now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.settings = settings
    self.keys = keys
    self.now = now
  }

  /// Checks the `Authorization` header's value.
  public func verify(authorization: String?) async throws(PushTokenRefusal) -> PushTokenClaims {
    guard let authorization, authorization.count > 7,
      authorization.prefix(7).lowercased() == "bearer "
    else { throw .missingBearer }
    return try await verify(token: String(authorization.dropFirst(7)))
  }

  public func verify(token: String) async throws(PushTokenRefusal) -> PushTokenClaims {
    guard token.utf8.count <= Self.maxTokenBytes else { throw .oversize }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .malformed("not three segments") }
    // Read before the signature is checked, by a parser that hashes its keys: stream-safe
    // first (`StreamSafeText`).
    guard let headerBytes = Base64URL.decode(parts[0]),
      StreamSafeText.isStreamSafe(json: headerBytes),
      let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any]
    else { throw .malformed("header") }
    guard let algorithm = header["alg"] as? String else { throw .malformed("no alg") }
    guard algorithm == "RS256" else { throw .unsupportedAlgorithm(algorithm) }
    guard header["crit"] == nil else { throw .malformed("crit") }
    guard let kid = header["kid"] as? String, !kid.isEmpty else { throw .unknownKey(nil) }
    guard let payload = Base64URL.decode(parts[1]) else { throw .malformed("payload") }
    guard let signature = Base64URL.decode(parts[2]) else { throw .malformed("signature") }
    let key = try await keys.key(id: kid)
    let signed = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    guard key.verifyRS256(signature: signature, message: signed) else { throw .badSignature }
    guard let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
    else { throw .malformed("claims") }
    return try check(claims)
  }

  private func check(_ claims: [String: Any]) throws(PushTokenRefusal) -> PushTokenClaims {
    let now = Int64(now().timeIntervalSince1970)
    guard let exp = Self.seconds(claims["exp"]) else { throw .missingClaim("exp") }
    guard let iat = Self.seconds(claims["iat"]) else { throw .missingClaim("iat") }
    guard now < exp + settings.leewaySeconds else { throw .expired }
    guard iat <= now + settings.leewaySeconds else { throw .issuedInFuture }
    let issuer = claims["iss"] as? String
    guard let issuer, settings.issuers.contains(issuer) else { throw .wrongIssuer(issuer) }
    // Pub/Sub sets one audience string; an array is read as RFC 7519 allows.
    let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String] ?? [])
    guard audiences.contains(settings.audience) else { throw .wrongAudience }
    let email = claims["email"] as? String
    guard let email, email == settings.serviceAccountEmail else { throw .wrongEmail(email) }
    let verified = claims["email_verified"]
    guard (verified as? Bool) == true || (verified as? String) == "true" else {
      throw .emailNotVerified
    }
    return PushTokenClaims(
      issuer: issuer, audience: settings.audience, email: email,
      subject: claims["sub"] as? String, issuedAt: iat, expiresAt: exp)
  }

  private static func seconds(_ value: Any?) -> Int64? {
    guard let number = JSONNumber.nonBoolean(value) else { return nil }
    let double = number.doubleValue
    guard double.isFinite, abs(double) < 1e15 else { return nil }
    return Int64(double)
  }
}
