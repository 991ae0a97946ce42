import Foundation
import JOSE

/// The bearer token of the App Store Server API: an ES256 JWT signed with the in-app purchase
/// key, naming the key (`kid`), the issuer, the app (`bid`) and the audience Apple expects.
/// Apple refuses tokens that live longer than an hour.
enum AppStoreAPIToken {
  static let audience = "appstoreconnect-v1"
  static let lifetimeSeconds: Int64 = 20 * 60

  static func make(key: AppStoreAPIKey, bundleId: String, now: Date = Date()) -> String? {
    let issuedAt = Int64(now.timeIntervalSince1970)
    let header: [String: String] = ["alg": "ES256", "kid": key.keyId, "typ": "JWT"]
    let payload: [String: Any] = [
      "iss": key.issuerId, "iat": issuedAt, "exp": issuedAt + lifetimeSeconds,
      "aud": audience, "bid": bundleId,
    ]
    guard
      let headerJSON = try? JSONSerialization.data(withJSONObject: header, options: .sortedKeys),
      let payloadJSON = try? JSONSerialization.data(withJSONObject: payload, options: .sortedKeys)
    else { return nil }
    let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payloadJSON)
    guard let signature = key.signES256(Array(signingInput.utf8)) else { return nil }
    return signingInput + "." + Base64URL.encode(signature)
  }
}
