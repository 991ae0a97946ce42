import Foundation
import JOSE

/// The JWT-bearer assertion a service account presents at its `token_uri` (RFC 7523, Google's
/// "Using OAuth 2.0 for Server to Server Applications"): RS256, `iss` the account's email,
/// `scope` the Android Publisher API, `aud` the token URI, valid for one hour (Google's
/// maximum).
public enum JWTAssertion {
  public static let scope = "https://www.googleapis.com/auth/androidpublisher"
  public static let lifetimeSeconds: Int64 = 3600

  /// Nil only when OpenSSL cannot sign.
  public static func make(key: ServiceAccountKey, scope: String = scope, now: Date = Date())
    -> String?
  {
    let issuedAt = Int64(now.timeIntervalSince1970)
    var header: [String: String] = ["alg": "RS256", "typ": "JWT"]
    if let keyId = key.privateKeyId { header["kid"] = keyId }
    let claims: [String: Any] = [
      "iss": key.clientEmail, "scope": scope, "aud": key.tokenURI.absoluteString,
      "iat": issuedAt, "exp": issuedAt + lifetimeSeconds,
    ]
    guard
      let headerJSON = try? JSONSerialization.data(
        withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes]),
      let claimsJSON = try? JSONSerialization.data(
        withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return nil }
    let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(claimsJSON)
    guard let signature = key.privateKey.signRS256(Array(signingInput.utf8)) else { return nil }
    return signingInput + "." + Base64URL.encode(signature)
  }
}
