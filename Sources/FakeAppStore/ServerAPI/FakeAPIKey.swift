import AppStore
import Foundation
import HTTP
import JOSE

/// The in-app purchase key the fake issues, as App Store Connect would: the fake keeps the key,
/// hands out its `.p8` PEM, and accepts App Store Server API requests only with a bearer JWT
/// that key signed (ES256, its `kid`, the issuer, audience `appstoreconnect-v1`, at most an
/// hour long and not expired; `iat` may be left out, as Apple's libraries do).
final class FakeAPIKey: Sendable {
  let keyId: String
  let issuerId: String
  let privateKeyPEM: String
  private let key: FakeSigningKey

  init(keyId: String, issuerId: String) throws {
    self.keyId = keyId
    self.issuerId = issuerId
    key = try FakeSigningKey()
    privateKeyPEM = try key.privateKeyPEM()
  }

  /// The bundle id the request's token names; 401 unless the token is one Apple would take.
  func authorize(_ request: Request, nowSeconds: Int64) throws -> String {
    guard let header = request.headers["Authorization"], header.hasPrefix("Bearer ") else {
      throw Self.unauthorized("no bearer token")
    }
    let parts = header.dropFirst("Bearer ".count).split(
      separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
      let payloadBytes = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
      let jwtHeader = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
      let claims = try? JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any]
    else { throw Self.unauthorized("not a JWT") }
    guard jwtHeader["alg"] as? String == "ES256", jwtHeader["kid"] as? String == keyId else {
      throw Self.unauthorized("wrong alg or kid")
    }
    let signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
    guard key.verifyES256(signature: signature, message: signingInput) else {
      throw Self.unauthorized("bad signature")
    }
    guard claims["iss"] as? String == issuerId, claims["aud"] as? String == "appstoreconnect-v1",
      let bundleId = claims["bid"] as? String, !bundleId.isEmpty,
      let expires = (claims["exp"] as? NSNumber)?.int64Value
    else { throw Self.unauthorized("missing or wrong claims") }
    // Apple's own libraries send no `iat`; without one the token may still live at most an
    // hour from now.
    let issuedAt = (claims["iat"] as? NSNumber)?.int64Value ?? nowSeconds
    guard issuedAt <= nowSeconds + 60, expires > nowSeconds, expires - issuedAt <= 3600 else {
      throw Self.unauthorized("expired, not yet valid, or longer than an hour")
    }
    return bundleId
  }

  private static func unauthorized(_ why: String) -> HTTPError {
    HTTPError(401, code: "unauthorized", detail: "App Store Server API token refused: \(why).")
  }
}
