import Foundation
import GooglePlay
import HTTP

extension FakeGooglePlayEndpoints {
  /// `POST /token`: the OAuth token endpoint for the JWT-bearer grant (RFC 7523). The
  /// assertion must be RS256 under the issued key, from its account, for this token URI, for
  /// the Android Publisher scope, and at most an hour long and current.
  func token(_ request: Request) async -> Response {
    if let fault = state.takeFault(.token) {
      if fault.delayMillis > 0 { try? await Task.sleep(for: .milliseconds(fault.delayMillis)) }
      if fault.status != 0 {
        return fault.status >= 500 || fault.status == 429
          ? Self.faultResponse(fault)
          : FakeGoogleError.oauth("invalid_grant", "Injected refusal.", status: fault.status)
      }
    }
    let form = Self.form(request.body)
    guard form["grant_type"] == AccessTokenSource.grantType else {
      return FakeGoogleError.oauth("unsupported_grant_type", "Invalid grant_type.")
    }
    guard let assertion = form["assertion"], let jwt = FakeJWT.parse(assertion) else {
      return FakeGoogleError.oauth("invalid_request", "Missing or malformed assertion.")
    }
    guard jwt.header["alg"] as? String == "RS256",
      serviceAccount.key.verifyRS256(signature: jwt.signature, message: jwt.signingInput)
    else { return FakeGoogleError.oauth("invalid_grant", "Invalid JWT Signature.") }
    if let kid = jwt.header["kid"] as? String, kid != serviceAccount.privateKeyId {
      return FakeGoogleError.oauth("invalid_grant", "Invalid JWT Signature.")
    }
    let audience = origin.withLock { $0 } + "/token"
    guard jwt.claims["iss"] as? String == serviceAccount.clientEmail else {
      return FakeGoogleError.oauth("invalid_grant", "Invalid email or User ID")
    }
    // Google documents `aud` as https://oauth2.googleapis.com/token, which is the token_uri of
    // every real key file; google-auth sends that value whatever the file says, so the fake
    // takes it as well as its own token URI.
    let presentedAudience = jwt.claims["aud"] as? String
    guard presentedAudience == audience || presentedAudience == Self.googleTokenEndpoint else {
      return FakeGoogleError.oauth("invalid_grant", "Invalid JWT: aud is not \(audience).")
    }
    let scopes = (jwt.claims["scope"] as? String)?.split(separator: " ").map(String.init) ?? []
    guard scopes.contains(JWTAssertion.scope) else {
      return FakeGoogleError.oauth("invalid_scope", "The androidpublisher scope is required.")
    }
    let now = FakePlayState.realSeconds()
    guard let iat = (jwt.claims["iat"] as? NSNumber)?.int64Value,
      let exp = (jwt.claims["exp"] as? NSNumber)?.int64Value, iat <= now + 60, exp > now,
      exp - iat <= 3600
    else {
      return FakeGoogleError.oauth(
        "invalid_grant",
        "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
          + "reasonable timeframe.")
    }
    let token = "ya29.fake-" + FakePlayState.newToken().dropFirst(5)
    let lifetime = configuration.accessTokenSeconds
    state.contents.withLock { contents in
      contents.accessTokens = contents.accessTokens.filter { $0.value > now }
      contents.accessTokens[token] = now + lifetime
    }
    return FakeGoogleError.json([
      "access_token": token, "expires_in": lifetime, "token_type": "Bearer",
    ])
  }

  static let googleTokenEndpoint = "https://oauth2.googleapis.com/token"

  /// `application/x-www-form-urlencoded`, first value per name.
  static func form(_ body: [UInt8]) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in String(decoding: body.prefix(64 * 1024), as: UTF8.self).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      func decode(_ text: Substring) -> String {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
          ?? String(text)
      }
      let name = decode(parts[0])
      if fields[name] == nil { fields[name] = parts.count > 1 ? decode(parts[1]) : "" }
    }
    return fields
  }
}
