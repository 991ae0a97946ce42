import AppAuth
import Foundation
import StorekeeperCore
import StorekeeperLogging

extension AppAuthenticator {
  /// Built from `APP_AUTH`; says loudly at start-up when nothing is checked.
  package init(_ settings: AppAuthSettings, receiptsWithoutSignIn: Bool = false, logger: Logger)
    throws
  {
    switch settings {
    case .none:
      logger.warning(
        "APP_AUTH=none: anyone who can reach this server may act for any user; use it only on a trusted private network"
      )
      mode = .none
    case .apiKeys(let entries):
      logger.notice("app requests need an API key", ["keys": .int(entries.count)])
      mode = .apiKeys(APIKeySet(entries))
    case .jwt(let jwt):
      let keys: any JWTKeySource
      if let secret = jwt.secret {
        keys = StaticKeySource(.hmac(secret: secret))
      } else if let text = jwt.jwksURL, let url = URL(string: text) {
        keys = JWKSKeySource(
          fetcher: HTTPJWKSFetcher(url: url),
          minRefetchInterval: .seconds(jwt.jwksRefetchSeconds),
          logger: logger.with("component", "jwks"))
      } else {
        throw ConfigError(variable: "APP_JWT_JWKS_URL", problem: "must be an https URL")
      }
      logger.notice(
        "app requests need a JWT",
        [
          "issuer": .string(jwt.issuer), "audience": .string(jwt.audience),
          "keys": .string(jwt.secret == nil ? "jwks" : "shared secret"),
        ])
      mode = .jwt(
        JWTVerifier(
          settings: .init(
            issuer: jwt.issuer, audience: jwt.audience,
            leewaySeconds: Double(jwt.leewaySeconds)),
          keys: keys))
    }
    if case .none = settings { return }
    self.receiptsWithoutSignIn = receiptsWithoutSignIn
    if receiptsWithoutSignIn {
      logger.notice(
        "RECEIPTS_WITHOUT_SIGN_IN=true: receipt posts without credentials are served as userless posts"
      )
    }
  }
}
