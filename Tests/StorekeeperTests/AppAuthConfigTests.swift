import AppAuth
import Foundation
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct AppAuthConfigTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APPLE_APP_APPLE_ID": "1234567890",
  ]
  let jwt = [
    "APP_AUTH": "jwt", "APP_JWT_ISSUER": "https://login.example.com",
    "APP_JWT_AUDIENCE": "storekeeper", "APP_JWT_SECRET": String(repeating: "s", count: 32),
  ]

  func variable(_ env: [String: String]) -> String? {
    do {
      _ = try AppConfig.fromEnvironment(base.merging(env) { $1 })
      return nil
    } catch let error as ConfigError {
      return error.variable
    } catch {
      return "?"
    }
  }

  func settings(_ env: [String: String]) throws -> AppAuthSettings {
    try AppConfig.fromEnvironment(base.merging(env) { $1 }).appAuth
  }

  @Test func startUpNeedsAChoice() throws {
    #expect(variable([:]) == "APP_AUTH")
    #expect(variable(["APP_AUTH": "maybe"]) == "APP_AUTH")
    guard case .none = try settings(["APP_AUTH": "none"]) else {
      Issue.record("APP_AUTH=none is not none")
      return
    }
  }

  @Test func jwtNeedsIssuerAudienceAndExactlyOneKeySource() throws {
    #expect(variable(jwt) == nil)
    #expect(variable(jwt.merging(["APP_JWT_ISSUER": ""]) { $1 }) == "APP_JWT_ISSUER")
    #expect(variable(jwt.merging(["APP_JWT_AUDIENCE": ""]) { $1 }) == "APP_JWT_AUDIENCE")
    #expect(variable(jwt.merging(["APP_JWT_SECRET": ""]) { $1 }) == "APP_JWT_JWKS_URL")
    #expect(variable(jwt.merging(["APP_JWT_SECRET": "short"]) { $1 }) == "APP_JWT_SECRET")
    #expect(
      variable(jwt.merging(["APP_JWT_JWKS_URL": "https://login.example.com/jwks"]) { $1 })
        == "APP_JWT_SECRET")
    #expect(variable(jwt.merging(["APP_JWT_LEEWAY": "61s"]) { $1 }) == "APP_JWT_LEEWAY")
    guard case .jwt(let parsed) = try settings(jwt.merging(["APP_JWT_LEEWAY": "0"]) { $1 })
    else {
      Issue.record("APP_AUTH=jwt is not jwt")
      return
    }
    #expect(parsed.leewaySeconds == 0 && parsed.secret?.count == 32)
    guard case .jwt(let defaults) = try settings(jwt) else { return }
    #expect(defaults.leewaySeconds == 30 && defaults.jwksRefetchSeconds == 60)
  }

  @Test func theJWKSURLMustBeHTTPSUnlessInsecureURLsAreAllowed() throws {
    var env = jwt
    env["APP_JWT_SECRET"] = nil
    env["APP_JWT_JWKS_URL"] = "http://127.0.0.1:9/jwks"
    #expect(variable(env) == "APP_JWT_JWKS_URL")
    env["ALLOW_INSECURE_URLS"] = "1"
    #expect(variable(env) == nil)
    env["ALLOW_INSECURE_URLS"] = "yes"
    #expect(variable(env) == "ALLOW_INSECURE_URLS")
  }

  @Test func appleURLsMustBeHTTPSUnlessInsecureURLsAreAllowed() {
    for name in ["APPLE_VERIFY_RECEIPT_URL", "APPLE_VERIFY_RECEIPT_SANDBOX_URL", "APPLE_API_URL"] {
      let env = ["APP_AUTH": "none", name: "http://127.0.0.1:9/x"]
      #expect(variable(env) == name)
      #expect(variable(env.merging(["ALLOW_INSECURE_URLS": "1"]) { $1 }) == nil)
      #expect(variable(["APP_AUTH": "none", name: "https://example.com/x"]) == nil)
    }
  }

  @Test func productionNeedsTheAppsAppleId() {
    let env = ["APP_AUTH": "none", "APPLE_APP_APPLE_ID": ""]
    #expect(variable(env) == "APPLE_APP_APPLE_ID")
    #expect(
      variable(env.merging(["APPLE_ENVIRONMENTS": "production,sandbox"]) { $1 })
        == "APPLE_APP_APPLE_ID")
    #expect(variable(env.merging(["APPLE_ENVIRONMENTS": "sandbox"]) { $1 }) == nil)
  }

  @Test func readsPlainAndHashedAPIKeys() throws {
    let plain = String(repeating: "k", count: 32)
    let hashed = String(repeating: "h", count: 40)
    let hex = APIKeySet.digest(of: hashed).map { String(format: "%02x", $0) }.joined()
    let env = ["APP_AUTH": "api_key", "APP_API_KEYS": "shop:\(plain),ci:sha256:\(hex)"]
    guard case .apiKeys(let entries) = try settings(env) else {
      Issue.record("APP_AUTH=api_key is not api_key")
      return
    }
    let keys = APIKeySet(entries)
    #expect(keys.match(plain) == "shop" && keys.match(hashed) == "ci")
    #expect(keys.match("sha256:\(hex)") == nil)
    #expect(variable(["APP_AUTH": "api_key"]) == "APP_API_KEYS")
    #expect(variable(["APP_AUTH": "api_key", "APP_API_KEYS": "shop:short"]) == "APP_API_KEYS")
    #expect(variable(["APP_AUTH": "api_key", "APP_API_KEYS": "ci:sha256:abc"]) == "APP_API_KEYS")
    // A digest without a name is not a 64-character key named "sha256".
    #expect(variable(["APP_AUTH": "api_key", "APP_API_KEYS": "sha256:\(hex)"]) == "APP_API_KEYS")
  }
}
