import AppAuth

/// How apps prove who the user is (`APP_AUTH`); there is no default, so a deployment always
/// says so.
public enum AppAuthSettings: Sendable {
  /// A bearer JWT from the app's own sign-in service; the user is its `sub`.
  case jwt(JWTAuthSettings)
  /// The app's backend calls with a key from `APP_API_KEYS` and names any user.
  case apiKeys([APIKeySet.Entry])
  /// Anyone reaching the server may act for any user: a trusted private network only.
  case none
}

/// `APP_JWT_*`: exactly one of a JWKS URL and a shared HS256 secret.
public struct JWTAuthSettings: Sendable {
  public var issuer: String
  public var audience: String
  public var leewaySeconds = 30
  public var jwksURL: String?
  public var secret: [UInt8]?
  /// At most one JWKS fetch per this many seconds, whatever unknown `kid`s arrive.
  public var jwksRefetchSeconds = 60

  public init(issuer: String, audience: String) {
    self.issuer = issuer
    self.audience = audience
  }
}
