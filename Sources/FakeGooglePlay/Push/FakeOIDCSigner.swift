import Foundation

/// Signs the OIDC tokens the fake's pushes carry, as Pub/Sub does for a push subscription with
/// authentication: an ID token of the push service account, for the configured audience, under
/// a key whose JWKS the fake serves at `/oauth2/v3/certs`.
final class FakeOIDCSigner: Sendable {
  static let issuer = "https://accounts.google.com"

  let keyId: String
  private let key: FakeRSAKey
  /// `{"keys": [...]}`, encoded once.
  let jwksBody: [UInt8]

  init() throws {
    key = try FakeRSAKey()
    keyId = String(FakePlayState.newToken().dropFirst(5).prefix(40))
    let document = ["keys": [try key.publicJWK(kid: keyId)]]
    jwksBody = [UInt8](
      try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]))
  }

  func token(audience: String, email: String, nowSeconds: Int64 = FakePlayState.realSeconds())
    throws -> String
  {
    try FakeJWT.sign(
      header: ["alg": "RS256", "kid": keyId, "typ": "JWT"],
      claims: [
        "iss": Self.issuer, "aud": audience, "azp": "104857600000000000000",
        "sub": "104857600000000000000", "email": email, "email_verified": true,
        "iat": nowSeconds, "exp": nowSeconds + 3600,
      ], key: key)
  }
}
